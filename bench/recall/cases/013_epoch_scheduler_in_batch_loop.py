"""Source: https://github.com/ivadomed/ivadomed/pull/55
Title: Fix scheduler updating
What went wrong: an epoch-based scheduler (modelled here as CosineAnnealingLR with T_max in
epochs; the PR only says it was meant per epoch) was stepped in the batch loop.
runs: trains but the cosine period ends after T_max batches
scope: documented
"""
import torch
import torch.nn as nn

num_epochs = 20
model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=num_epochs)
loader = [(torch.randn(2, 1, 16, 16), torch.rand(2, 1, 16, 16)) for _ in range(8)]

for epoch in range(num_epochs):
    for img, gt in loader:
        preds = torch.sigmoid(model(img))
        loss = ((preds - gt) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()  # expect: GF202
