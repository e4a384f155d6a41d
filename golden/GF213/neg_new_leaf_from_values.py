# GF213 negative: the name is rebound to a new leaf built from the old values
# (torch.tensor(..., requires_grad=True), nn.Parameter), whose .grad is real.
import torch
import torch.nn as nn


def restart(values):
    a = torch.tensor(values, requires_grad=True)
    a = torch.tensor(a.tolist(), requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    b = nn.Parameter(b.detach() * 2)
    loss = (a.sum() + b.sum()) * 2
    loss.backward()
    return a.grad, b.grad
