"""Source: https://github.com/pytorch/pytorch/issues/7617
Title: checkpoint(function, *args) should has the same requires_grad as function(*args)
What went wrong: a Linear layer is checkpointed on an input that does not require grad; with
the reentrant checkpoint the output does not require grad, so the layer gets no gradient.
runs: trains but z1.requires_grad is False and m.weight.grad stays None
scope: documented
"""
import torch
from torch.utils.checkpoint import checkpoint

m = torch.nn.Linear(4, 3)
x = torch.randn(10, 4)

z1 = checkpoint(lambda _: m(_), x)  # expect: GF306
print(z1.requires_grad)

z2 = m(x)
print(z2.requires_grad)
