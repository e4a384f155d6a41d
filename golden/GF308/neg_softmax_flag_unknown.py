# GF308 negative: whether the softmax branch runs depends on a flag read from the
# command line; the analysis cannot tell its value, so it stays silent.
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(10, 3)

    def forward(self, feats, normalize=False):
        out = self.proj(feats)
        if normalize:
            out = F.softmax(out, dim=1)
        return out


normalize_outputs = "--normalize" in sys.argv
head = Head()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
for _ in range(10):
    feats, labels = torch.randn(4, 10), torch.randint(0, 3, (4,))
    loss = criterion(head(feats, normalize_outputs), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
