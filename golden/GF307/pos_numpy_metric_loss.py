# GF307 positive: the prediction goes through NumPy to compute the loss. The
# first break (`.detach()`) is reported; the rest of the chain is already cut.
import numpy as np
import torch
import torch.nn as nn

model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for step in range(50):
    x, y = torch.randn(8, 3), np.random.randn(8, 1)
    pred = model(x).detach().cpu().numpy()
    loss = torch.tensor(np.mean((pred - y) ** 2), requires_grad=True)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
