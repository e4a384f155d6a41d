# GF302 negative: a scaled random tensor that requires grad is only an input of the
# computation (its gradient flows to the leaf it came from, which nobody reads), and
# a scaled leaf built under no_grad records nothing. Neither is used as a leaf.
import torch

base = torch.randn(3, 3, requires_grad=True)
noise = torch.randn(3, 3, requires_grad=True) * 0.1
out = (base + noise).sum()
out.backward()
print(base.grad)
with torch.no_grad():
    init = torch.randn(3, requires_grad=True) * 0.5
