# GF104 positive: a hand-rolled weight-decay term summed over all Linear layers
# from `m.weight.data ** 2`. It is added to the loss but detached from the
# graph. The 5e-4 multiplier weights this term only (no GF201).
import torch
import torch.nn as nn


def weight_decay_term(model):
    reg = 0.0
    for m in model.modules():
        if isinstance(m, nn.Linear):
            reg = reg + torch.sum(m.weight ** 2)
    return reg


model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
x, y = torch.randn(256, 16), torch.randn(256, 1)

for epoch in range(50):
    optimizer.zero_grad()
    loss = criterion(model(x), y) + 5e-4 * weight_decay_term(model)
    loss.backward()
    optimizer.step()
