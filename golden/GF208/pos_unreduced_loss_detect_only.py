# GF208 positive without a fix: the accumulated loss is per-sample
# (reduction="none"), so `.item()` would fail; gradfix reports it only.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(16, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(100)]
per_sample = torch.zeros(8)

for x, y in loader:
    optimizer.zero_grad()
    losses = F.cross_entropy(model(x), y, reduction="none")
    loss = losses.mean()
    loss.backward()
    optimizer.step()
    per_sample += losses
