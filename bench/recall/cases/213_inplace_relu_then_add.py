"""Source: https://github.com/pytorch/pytorch/issues/5687
Title: ReLU(inplace=True) seems something wrong internal
What went wrong: a block applies an `nn.ReLU(inplace=True)` and then adds a second branch onto its
output with `+=`; the ReLU keeps its output for backward, the in-place addition overwrites it, and
the maintainers' answer is that an in-place addition after an in-place ReLU cannot work.
runs: raises RuntimeError "... modified by an inplace operation ... output 0 of Relu, is at version 2" in backward()
scope: documented
"""
import torch
import torch.nn as nn


class TwoBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_a = nn.Linear(6, 6)
        self.fc_b = nn.Linear(6, 6)
        self.relu = nn.ReLU(inplace=True)
        self.head = nn.Linear(6, 1)

    def forward(self, x):
        h = self.relu(self.fc_a(x))
        h += self.fc_b(x)  # expect: GF101
        return self.head(h)


net = TwoBranch()
out = net(torch.randn(5, 6))
out.pow(2).mean().backward()
