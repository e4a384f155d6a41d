"""Healthy: the optimizer is given every parameter, some of them frozen (Adam skips parameters without grads)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(30, 8), nn.Flatten(), nn.Linear(8 * 5, 2))
model[0].weight.requires_grad = False
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(6):
    tokens = torch.randint(0, 30, (4, 5))
    opt.zero_grad()
    nn.functional.cross_entropy(model(tokens), torch.randint(0, 2, (4,))).backward()
    opt.step()
