# GF205 positive: nothing clears the gradients; step k uses the sum of k
# batches' gradients.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]

for epoch in range(10):
    for x, y in loader:
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
