"""Healthy: an MNIST-like MLP classifier on synthetic digits, Adam, zero_grad each step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 10))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x_all = torch.randn(256, 1, 28, 28)
y_all = torch.randint(0, 10, (256,))
for epoch in range(2):
    model.train()
    for i in range(0, 256, 32):
        x, y = x_all[i:i + 32], y_all[i:i + 32]
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        acc = (model(x_all).argmax(1) == y_all).float().mean()
