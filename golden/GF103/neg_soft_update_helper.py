# GF103 negative: a soft-update helper, called between the loss and backward(),
# writes the target network's parameters through .data; the target is used only
# under no_grad and the optimizer does not hold it.
import torch
import torch.nn as nn


def soft_update(target, source, tau):
    for tp, sp in zip(target.parameters(), source.parameters()):
        tp.data.copy_(tp.data * (1.0 - tau) + sp.data * tau)


def train(loader, tau=0.01):
    online = nn.Linear(8, 8)
    target = nn.Linear(8, 8)
    opt = torch.optim.SGD(online.parameters(), lr=0.1)
    for x, x2 in loader:
        with torch.no_grad():
            goal = target(x2)
        loss = ((online(x) - goal) ** 2).mean()
        soft_update(target, online, tau)
        opt.zero_grad()
        loss.backward()
        opt.step()
