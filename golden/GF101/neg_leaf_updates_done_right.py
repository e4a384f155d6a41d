# GF101 negative: leaves that require grad, updated the ways that work: under no_grad, through
# `.data`, after requires_grad was turned off, and on a copy that is not a leaf (`.double()` makes a
# new tensor that autograd tracks: writing into it is allowed; `.to("cpu")` on a CPU tensor would
# return the leaf itself, so it is no such copy).
import torch

a = torch.randn(3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
c = torch.randn(3, requires_grad=True)
d = torch.randn(3, requires_grad=True).double()
x = torch.randn(3)

for step in range(2):
    loss = (a * x).sum() + (b * x).sum()
    loss.backward()
    with torch.no_grad():
        a -= 0.1 * a.grad
    b.data -= 0.1 * b.grad
    a.grad = None
    b.grad = None

c.requires_grad_(False)
c += 1.0
d *= 2.0
