# GF302 positive: the classic forum bug. `requires_grad=True` applies to the CPU
# leaf; `w` and `b` hold its CUDA copies (non-leaves), so `w.grad` stays None and
# `torch.optim.SGD([w, b])` raises "can't optimize a non-leaf Tensor".
import torch

w = torch.randn(784, 10, device="cuda", requires_grad=True)
b = torch.zeros(10, device="cuda", requires_grad=True)
optimizer = torch.optim.SGD([w, b], lr=0.1)
