# GF204 negative: the usual orders, zero_grad before the forward pass or right
# after the step.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]

for x, y in loader:
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()

for x, y in loader:
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
