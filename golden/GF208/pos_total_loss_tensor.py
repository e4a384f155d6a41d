# GF208 positive: `total_loss += loss` keeps every batch's graph alive until
# the epoch ends (memory grows with each step).
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(16, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 16), torch.randn(8, 4)) for _ in range(100)]

for epoch in range(10):
    total_loss = 0
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = F.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total_loss += loss
    print(f"epoch {epoch}: {total_loss / len(loader)}")
