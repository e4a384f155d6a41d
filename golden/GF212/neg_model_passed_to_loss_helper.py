# GF212 negative: the only direct call of the model is a logging probe under
# no_grad; the loss that trains it runs inside a helper the model is passed to.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def compute_loss(net, x, y):
    return F.mse_loss(net(x), y)


def train(loader):
    for x, y in loader:
        with torch.no_grad():
            before = model(x).mean().item()
        loss = compute_loss(model, x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(before, loss.item())
