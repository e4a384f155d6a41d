# GF308 positive: an nn.Sequential ending in nn.Softmax, its output bound to a
# name and fed to the criterion.
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3), nn.Softmax(dim=1))
loss_fn = nn.CrossEntropyLoss()


def step(x, y, optimizer):
    probs = model(x)
    loss = loss_fn(probs, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
