"""Source: https://github.com/pytorch/pytorch/issues/7860
Title: .data and .detach
What went wrong: the reporter zeroed `x.detach()` expecting a copy; the original product `x`
became zero too and the loss silently used the zeroed values.
runs: trains but the loss sees the zeroed tensor (no error; out == 0)
scope: documented
"""
import torch

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([2.0, 3.0], requires_grad=True)
y = torch.tensor([1.0, 1.0], requires_grad=True)

x = a * b
x_detach = x.detach()  # expect: GF102
x_detach.zero_()
out = (x * y).sum()
out.backward()
print(out.item(), y.grad)
