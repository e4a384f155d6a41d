"""The optimizer holds only the frozen backbone; the head trains into no optimizer."""
import torch
import torch.nn as nn

backbone = nn.Sequential(nn.Linear(12, 12), nn.ReLU())
head = nn.Linear(12, 2)
for p in backbone.parameters():
    p.requires_grad = False
opt = torch.optim.SGD(backbone.parameters(), lr=0.1)
for _ in range(5):
    x, y = torch.randn(8, 12), torch.randn(8, 2)
    opt.zero_grad()
    loss = (head(backbone(x)) - y).pow(2).mean()
    loss.backward()
    opt.step()
