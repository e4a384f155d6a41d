"""Healthy: gradient accumulation over 4 micro-batches, loss divided by the accumulation count, step and
zero_grad every 4th micro-batch."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
accum = 4
opt.zero_grad()
for i in range(24):
    x, y = torch.randn(4, 12), torch.randn(4, 1)
    loss = nn.functional.mse_loss(model(x), y) / accum
    loss.backward()
    if (i + 1) % accum == 0:
        opt.step()
        opt.zero_grad()
