"""Source: https://github.com/pytorch/pytorch/issues/22860
Title: "None" - gradient on "CUDA" device with no errors, but it work on "CPU" device.
What went wrong: a tensor is created with `requires_grad=True` and then rebound with
`x = x.to(device)`; on a GPU the name now holds a non-leaf copy, so after backward `x.grad` is
None (with a warning) while the same script on the CPU prints the gradient.
runs: on a CUDA machine prints None and warns that a non-leaf tensor's .grad is accessed; on CPU `.to("cpu")` returns the leaf and the gradient prints
scope: documented
"""
import torch

x = torch.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]], requires_grad=True)
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
x = x.to(device)  # expect: GF302
function = 10 * (x ** 2).sum()
function.backward()
print(x.grad, "<- gradient")
