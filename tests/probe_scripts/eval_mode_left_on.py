"""Validation switches the model to eval() inside the epoch loop and nothing switches it back."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
train = DataLoader(TensorDataset(torch.randn(16, 8), torch.randn(16, 1)), batch_size=8)
val = DataLoader(TensorDataset(torch.randn(8, 8), torch.randn(8, 1)), batch_size=8)
model.train()
for epoch in range(4):
    for x, y in train:
        opt.zero_grad()
        (model(x) - y).pow(2).mean().backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        val_loss = sum((model(x) - y).pow(2).mean().item() for x, y in val)
