# GF101 negative: the activation's saved result never reaches the in-place add.
# Each way through the `if`/`else` rebinds `feat` to a new tensor (a linear
# layer's or a batch norm's output, neither of which autograd keeps), and the
# second block runs its layers in a loop, so the in-place result written before
# the loop is not shown to be what `+=` changes.
import torch
import torch.nn as nn


class TwoWay(nn.Module):
    def __init__(self, size=10, wide=True):
        super().__init__()
        self.wide = wide
        self.first = nn.Linear(size, size)
        self.act = nn.LeakyReLU(0.1, inplace=True)
        self.mix = nn.Linear(size, size)
        self.norm = nn.BatchNorm1d(size)

    def forward(self, x):
        feat = self.act(self.first(x))
        if self.wide:
            feat = self.mix(feat)
        else:
            feat = self.norm(feat)
        feat += x
        return feat


class Stack(nn.Module):
    def __init__(self, size=10, depth=2):
        super().__init__()
        self.entry = nn.Linear(size, size)
        self.act = nn.LeakyReLU(0.1, inplace=True)
        self.layers = nn.ModuleList(nn.Linear(size, size) for _ in range(depth))

    def forward(self, x):
        feat = self.act(self.entry(x))
        for layer in self.layers:
            feat = layer(feat)
        feat += x
        return feat


for net in (TwoWay(wide=True), TwoWay(wide=False), Stack()):
    net(torch.randn(4, 10)).sum().backward()
