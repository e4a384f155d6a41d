"""A penalty read through `.data` and weighted by a hyper-parameter from a config object: the factor is a
constant, so the term still contributes no gradient (a weight does not make it a stop-gradient on purpose)."""
import torch
import torch.nn as nn


class Config:
    l1 = 1e-4


cfg = Config()
net = nn.Linear(10, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(5):
    x, y = torch.randn(4, 10), torch.randint(0, 2, (4,))
    loss = nn.functional.cross_entropy(net(x), y) + cfg.l1 * net.weight.data.abs().sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
