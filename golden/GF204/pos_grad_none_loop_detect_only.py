# GF204 positive without a fix: `p.grad = None` over the optimizer's parameters
# runs between backward() and step() inside a nested loop; gradfix reports it
# (every step sees no gradient) and leaves the move to the user.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]

for x, y in loader:
    loss = F.mse_loss(model(x), y)
    loss.backward()
    for p in model.parameters():
        p.grad = None
    optimizer.step()
