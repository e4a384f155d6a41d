"""Healthy: a CPU GradScaler that is enabled (its scale, 65536, multiplies the loss before backward)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu")
for step in range(6):
    x, y = torch.randn(8, 10), torch.randn(8, 1)
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(x)
    loss = (out.float() - y).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
