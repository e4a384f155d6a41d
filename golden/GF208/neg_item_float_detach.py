# GF208 negative: the second seed's `total_loss += loss.item()`, and the other
# graph-free forms: float(loss), loss.detach(), loss.data.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(16, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 16), torch.randn(8, 4)) for _ in range(100)]

for epoch in range(10):
    total_loss = 0
    total_f = 0.0
    total_d = torch.zeros(())
    total_data = torch.zeros(())
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = F.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
        total_f += float(loss)
        total_d += loss.detach()
        total_data += loss.data
