# GF302 negative: the copies are non-leaves, but nothing needs them to be
# leaves: an LSTM initial state, a loss accumulator, an input whose gradient is
# taken with torch.autograd.grad (which works on non-leaves), a tensor
# re-wrapped as a Parameter, and arithmetic on the copy.
import torch
import torch.nn as nn


def run(lstm, seq):
    h = torch.zeros(1, 1, 100, requires_grad=True).cuda()
    c = torch.zeros(1, 1, 100, requires_grad=True).cuda()
    total = torch.zeros(1, requires_grad=True).cuda()
    for x in seq:
        out, (h, c) = lstm(x, (h, c))
        total = total + out.sum()
    return total


def input_gradient(f):
    x = torch.randn(3, requires_grad=True).double()
    (g,) = torch.autograd.grad(f(x).sum(), x)
    return g


lam = nn.Parameter(torch.tensor([0.0], requires_grad=True).cuda())
mu = 0.5 * torch.ones(1, 6, requires_grad=True).cuda()
