# GF208 positive: the helper returns a tensor computed from the loss (it scales
# its argument), not a number, so the running total still keeps every graph.
# Reported without a fix: the helper is not known to be a loss.
import torch
import torch.nn as nn


def smoothed(value, factor=0.9):
    return value * factor


model = nn.Linear(4, 1)
crit = nn.MSELoss()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
total = 0.0
for step in range(10):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    loss = crit(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    total += smoothed(loss)
print(total)
