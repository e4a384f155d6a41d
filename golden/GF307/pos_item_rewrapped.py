# GF307 positive: the loss value is taken out with .item() and re-wrapped as a
# fresh tensor that requires grad, so backward() runs and every gradient of the
# model stays None: the loss prints, nothing learns.
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)

for epoch in range(10):
    x, y = torch.randn(32, 4), torch.randn(32, 1)
    opt.zero_grad()
    mse = F.mse_loss(net(x), y)
    loss = torch.tensor(mse.item(), requires_grad=True)
    loss.backward()
    opt.step()
