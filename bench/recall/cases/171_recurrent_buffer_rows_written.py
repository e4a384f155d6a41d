"""Source: https://github.com/pytorch/pytorch/issues/36470
Title: one of the variables needed for gradient computation has been modified by an inplace operation
What went wrong: a recurrence f(n) = sigmoid(f(n-1) * x) is evaluated into the rows of one
preallocated buffer; each step reads the previous row (which the product saves for backward)
and then writes the next row of the same buffer in place, so the saved row's version changes.
runs: raises RuntimeError (modified by an inplace operation) when the gradient is taken
scope: documented
"""
import torch

steps = 8
x = torch.full((3,), 0.5, requires_grad=True)
f = torch.zeros(steps, 3)
f[0] = 1.0
for i in range(1, steps):
    f[i] = f[i - 1] * x  # expect: GF101
    f[i] = torch.sigmoid(f[i])
loss = f.sum()
(grad_x,) = torch.autograd.grad(loss, [x])
print(grad_x)
