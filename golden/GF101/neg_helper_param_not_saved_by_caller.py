# GF101 negative: the same in-place helper, but no caller hands it a tensor that
# autograd keeps: a linear layer's output (the layer keeps its input, not its
# output), a clone, and a sigmoid output under no_grad. It trains.
import torch
import torch.nn as nn


def squeeze_range(t):
    t = t.mul_(0.5)
    return t + 0.25


layer = nn.Linear(4, 4)
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
x = torch.randn(3, 4)
opt.zero_grad()
h = layer(x)
loss = squeeze_range(h).sum() + squeeze_range(x.clone()).sum()
with torch.no_grad():
    s = torch.sigmoid(layer(x))
    shown = squeeze_range(s)
loss.backward()
opt.step()
