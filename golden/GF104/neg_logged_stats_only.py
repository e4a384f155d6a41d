# GF104 negative: a weight-norm statistic computed from `.data` before
# backward but only logged (never added to the loss), plus weight/grad norms
# read through `.data` after backward.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
history = {"l2": [], "wnorm": [], "gnorm": []}

for step in range(100):
    x, y = torch.randn(16, 32), torch.randint(0, 2, (16,))
    loss = F.cross_entropy(model(x), y)
    l2_val = sum(p.data.pow(2).sum() for p in model.parameters())
    history["l2"].append(float(l2_val))
    optimizer.zero_grad()
    loss.backward()
    history["wnorm"].append(model[0].weight.data.norm().item())
    history["gnorm"].append(model[0].weight.grad.data.norm().item())
    optimizer.step()
