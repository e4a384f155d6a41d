# GF208 positive: the loss weighted by the batch size; `.item()` goes on the
# loss, the weight stays.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(16, 4)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(100)]

for epoch in range(10):
    epoch_loss, seen = 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        epoch_loss += loss * x.size(0)
        seen += x.size(0)
    print(epoch, epoch_loss / seen)
