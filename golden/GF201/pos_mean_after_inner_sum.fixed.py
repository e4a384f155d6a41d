# GF201 positive next to summed losses: the loss reaching backward is a mean
# (`.sum(dim=1)` over features, then `.mean()` over the batch, and an explicit
# reduction="mean"), so `/ 10000` is a constant scale on every gradient.
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 16))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
mse = nn.MSELoss(reduction="mean")
data = [torch.randn(32, 16) for _ in range(20)]

for epoch in range(4):
    for x in data:
        optimizer.zero_grad()
        recon = model(x)
        per_sample = ((recon - x) ** 2).sum(dim=1)
        loss = (per_sample.mean() + mse(recon, x))
        loss.backward()
        optimizer.step()
