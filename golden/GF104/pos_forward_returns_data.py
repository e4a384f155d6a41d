# GF104 positive: the forward returns `.data` of its probabilities, so the loss
# has no grad_fn; marking the loss as requiring grad hides the error and the
# model never learns. Detect only.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(10, 3)

    def forward(self, x):
        probs = torch.sigmoid(self.head(x))
        return probs.data


model = Tagger()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(4):
    x, y = torch.randn(5, 10), torch.rand(5, 3).round()
    loss = F.binary_cross_entropy(model(x), y)
    loss.requires_grad_(True)
    opt.zero_grad()
    loss.backward()
    opt.step()
