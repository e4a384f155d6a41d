"""Source: https://github.com/pytorch/pytorch/issues/13113
Title: Question about cuda grad
What went wrong: a tensor created with requires_grad=True is moved to the GPU and the name is
rebound to the copy; after backward, `a.grad` is None because the copy is not a leaf. Moving
first and setting requires_grad afterwards gives the gradient.
runs: on a CUDA machine prints None; on a CPU-only machine `.cuda()` raises
scope: documented
"""
import torch

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
a = a.cuda()  # expect: GF302
b = a ** 2
c = b.mean(0)
c.backward()
print(a.grad)
