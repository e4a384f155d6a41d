# GF204 negative: a non-finite batch is dropped: zero_grad, then `continue`.
# The zero_grad never runs before the step of the same iteration; gradient
# accumulation with the zero_grad after the conditional step is fine too.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]

for i, (x, y) in enumerate(loader):
    loss = F.mse_loss(model(x), y)
    loss.backward()
    if not torch.isfinite(loss):
        optimizer.zero_grad()
        continue
    optimizer.step()
    optimizer.zero_grad()

for i, (x, y) in enumerate(loader):
    loss = F.mse_loss(model(x), y) / 4
    loss.backward()
    if (i + 1) % 4 == 0:
        optimizer.step()
        optimizer.zero_grad()
