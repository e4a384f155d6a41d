# GF102 negative: writing through a detached view is how these helpers do
# their job; the shared storage is the point, not a hazard.
# - zeroing a module's weights at initialisation,
# - an exponential moving average of another model's weights,
# - copying master weights back into the model,
# - a caller-provided output buffer filled through its detached view,
# - a registered buffer reset in forward.
import copy

import torch
import torch.nn as nn


def zero_init(module):
    for p in module.parameters():
        p.detach().zero_()
    return module


def update_average(avg_model, model, decay=0.999):
    for a, p in zip(avg_model.parameters(), model.parameters()):
        a.detach().mul_(decay).add_(p.detach(), alpha=1 - decay)


def load_master(params, master_params):
    for p, m in zip(params, master_params):
        p.detach().copy_(m)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = zero_init(nn.Linear(4, 4))
        self.register_buffer("hits", torch.zeros(4))

    def forward(self, x, out=None):
        h = self.fc(x)
        counts = self.hits.detach()
        counts.add_(1)
        if out is not None:
            target = out.detach()
            target.copy_(h)
        return h


model = Block()
averaged = copy.deepcopy(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in [torch.randn(2, 4) for _ in range(3)]:
    opt.zero_grad()
    model(x).pow(2).sum().backward()
    opt.step()
    update_average(averaged, model)
