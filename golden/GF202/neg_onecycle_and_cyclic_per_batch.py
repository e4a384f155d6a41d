# GF202 negative: OneCycleLR and CyclicLR are built to be stepped once per
# batch (their periods are counted in optimizer steps).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import CyclicLR, OneCycleLR

model = nn.Linear(20, 2)
loader = [(torch.randn(8, 20), torch.randint(0, 2, (8,))) for _ in range(50)]
epochs = 10
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
scheduler = OneCycleLR(optimizer, max_lr=0.1, steps_per_epoch=len(loader), epochs=epochs)

for epoch in range(epochs):
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        scheduler.step()

optimizer2 = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
cyclic = CyclicLR(optimizer2, base_lr=1e-4, max_lr=1e-2, step_size_up=2000)
for epoch in range(epochs):
    for x, y in loader:
        optimizer2.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer2.step()
        cyclic.step()
