# GF101 positive: a helper rescales its argument in place, and the training step
# hands it the output of a Sigmoid, which autograd keeps for Sigmoid's backward;
# the write reaches the caller's tensor and backward() raises. Detect only: the
# helper is shared by other callers (write it out of place: `t = t * 0.5 + 0.25`).
import torch
import torch.nn as nn


def squeeze_range(t):
    t = t.mul_(0.5)
    return t + 0.25


gate = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid())
opt = torch.optim.SGD(gate.parameters(), lr=0.1)
x = torch.randn(3, 4)
opt.zero_grad()
g = gate(x)
loss = squeeze_range(g).sum() + squeeze_range(x.clone()).sum()
loss.backward()
opt.step()
