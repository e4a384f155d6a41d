"""Source: https://github.com/pytorch/pytorch/issues/6991
Title: clamp makes grad None
What went wrong: a tensor created with requires_grad=True is rebound to its own clamp,
`a = torch.clamp(a, 0, 1)`, so the name now points at a non-leaf and `a.grad` is None.
runs: trains but a.grad is None after backward
scope: documented
"""
import torch

a = torch.rand(1, requires_grad=True)
a = torch.clamp(a, 0, 1)  # expect: GF213
z = 2 * a
z.backward()
print(a.requires_grad)
print(a.grad)
