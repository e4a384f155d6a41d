# GF101 negative: the nearby blocks that train. Out of place, LeakyReLU and ELU
# keep their input, not their output; a Sequential ending in Dropout returns a
# fresh tensor; and the usual ResNet order adds the identity before the
# in-place ReLU. None of these `+=` touches a tensor autograd saved
# (each checked with torch 2.13: backward runs).
import torch
import torch.nn as nn


class MixedBlock(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.leaky = nn.LeakyReLU(0.2)
        self.elu = nn.ELU()
        self.tail = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Dropout(0.3))
        self.norm = nn.BatchNorm1d(width)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        a = self.leaky(self.proj(x))
        a += x
        b = self.elu(self.proj(x))
        b += x
        c = self.tail(x)
        c += x
        d = self.norm(self.proj(x))
        d += x
        d = self.relu(d)
        return a + b + c + d


block = MixedBlock(16)
opt = torch.optim.SGD(block.parameters(), lr=0.01)
for _ in range(2):
    y = block(torch.randn(8, 16))
    loss = y.square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
