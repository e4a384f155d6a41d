# GF205 negative: other ways to clear gradients: `model.zero_grad()`, and
# `p.grad = None` over the parameters.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]

for x, y in loader:
    model.zero_grad(set_to_none=True)
    F.mse_loss(model(x), y).backward()
    optimizer.step()

for x, y in loader:
    F.mse_loss(model(x), y).backward()
    optimizer.step()
    for p in model.parameters():
        p.grad = None
