# GF308 positive (log_softmax form): the submodule is named `softmax` but is an
# nn.LogSoftmax; its output fed to CrossEntropyLoss is redundant, not a second softmax,
# and the message says which (its constructor decides, not its name).
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 6)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, x):
        return self.softmax(self.proj(x))


tagger = Tagger()
criterion = nn.CrossEntropyLoss()
feats, tags = torch.randn(5, 16), torch.randint(0, 6, (5,))
criterion(tagger(feats), tags).backward()
