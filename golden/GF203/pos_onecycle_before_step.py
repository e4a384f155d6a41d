# GF203 positive: OneCycleLR is meant to be stepped per batch, but after the
# optimizer: stepping it first skips the schedule's first value.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))
loader = [(torch.randn(16, 32), torch.randint(0, 4, (16,))) for _ in range(40)]
epochs = 8
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=epochs * len(loader))

for epoch in range(epochs):
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        scheduler.step()
        optimizer.step()
