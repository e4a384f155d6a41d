# GF206 negative: the correct order, with and without AMP.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]

for x, y in loader:
    optimizer.zero_grad()
    F.mse_loss(model(x), y).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()

for x, y in loader:
    optimizer.zero_grad()
    scaler.scale(F.mse_loss(model(x), y)).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
