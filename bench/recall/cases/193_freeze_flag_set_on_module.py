"""Source: https://github.com/catalyst-team/catalyst/pull/81
Title: Fix freeze
What went wrong: the freeze helper sets `requires_grad = False` on the module objects themselves;
that only adds a plain attribute to each module and freezes nothing, so the "frozen" encoder keeps
training. The fix loops over each module's parameters instead.
runs: trains; the encoder's weights still change after "freezing" (the run prints False)
scope: documented
"""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 2)

    def forward(self, x):
        return self.head(self.encoder(x))


def freeze(modules):
    for module in modules:
        module.requires_grad = False  # expect: GF210


net = Net()
freeze([net.encoder])
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
before = net.encoder[0].weight.clone()
loss = nn.functional.cross_entropy(net(torch.randn(4, 8)), torch.randint(0, 2, (4,)))
loss.backward()
optimizer.step()
print(torch.equal(before, net.encoder[0].weight))
