"""StepLR(step_size=3) counted in epochs, stepped once per batch of an 8-batch DataLoader."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

model = nn.Linear(6, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.1)
loader = DataLoader(TensorDataset(torch.randn(64, 6), torch.randint(0, 2, (64,))), batch_size=8)
for epoch in range(3):
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        scheduler.step()
