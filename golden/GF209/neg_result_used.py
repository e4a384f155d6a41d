# GF209 negative: out-of-place ops whose result is used.
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
x = torch.randn(3, 4)
y = model(x).add(1)
z = y.clamp(0, 1)
clipped = [p.grad.clamp(-1, 1) if p.grad is not None else None for p in model.parameters()]
print(z.mul(2))
