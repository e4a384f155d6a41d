# GF203 positive together with GF202: a StepLR stepped per batch AND before the
# optimizer. GF202's fix (once per epoch, at the end of the epoch loop) repairs
# both, so GF203 reports without a fix of its own.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(12, 3)
loader = [(torch.randn(8, 12), torch.randint(0, 3, (8,))) for _ in range(30)]
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)

for epoch in range(60):
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    scheduler.step()
