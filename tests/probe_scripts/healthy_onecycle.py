"""Healthy: OneCycleLR is a per-iteration schedule and is meant to be stepped every batch."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

model = nn.Linear(6, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loader = DataLoader(TensorDataset(torch.randn(64, 6), torch.randint(0, 2, (64,))), batch_size=8)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=3 * len(loader))
for epoch in range(3):
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        sched.step()
