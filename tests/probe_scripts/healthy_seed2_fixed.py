"""Healthy: the second seed's loop without the 1e9 divisor and with StepLR stepped once per epoch."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 4))
loss_fn = nn.BCEWithLogitsLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.9)
train_dataloader = DataLoader(TensorDataset(torch.randn(32, 20), (torch.rand(32, 4) > 0.5).float()), batch_size=8)
for epoch in range(2):
    model.train()
    total_loss = 0
    for inputs, targets in train_dataloader:
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1)
        optimizer.step()
        total_loss += loss.item()
    scheduler.step()
