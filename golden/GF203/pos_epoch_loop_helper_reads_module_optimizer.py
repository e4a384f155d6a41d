"""Trains a small regressor. Call run_epoch() once per epoch; the schedule decays the rate."""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
decay = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
batches = [(torch.randn(5, 6), torch.randn(5, 1)) for _ in range(3)]


def run_epoch():
    for x, y in batches:
        opt.zero_grad()
        nn.functional.mse_loss(net(x), y).backward()
        opt.step()


for epoch in range(5):
    decay.step()
    run_epoch()
