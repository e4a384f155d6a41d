# GF205 positive: zero_grad() runs once per epoch, before the batch loop, so
# gradients still accumulate across that epoch's batches.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]

for epoch in range(10):
    optimizer.zero_grad()
    for x, y in loader:
        loss = F.mse_loss(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
