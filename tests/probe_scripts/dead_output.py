"""A regression net ending in ReLU whose last bias starts far below zero: every output is 0, nothing learns."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1), nn.ReLU())
with torch.no_grad():
    model[2].bias.fill_(-100.0)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(5):
    x, y = torch.randn(16, 4), torch.rand(16, 1)
    opt.zero_grad()
    pred = model(x)
    loss = nn.functional.mse_loss(pred, y)
    loss.backward()
    opt.step()
