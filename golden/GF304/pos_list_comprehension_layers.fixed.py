# GF304 positive: the hidden layers live in a plain list. forward uses them, so
# the loss depends on their weights, yet parameters() (and so the optimizer),
# state_dict() and .to(device) never see them.
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, width=16, depth=3):
        super().__init__()
        self.inp = nn.Linear(8, width)
        self.hidden = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
        self.out = nn.Linear(width, 2)

    def forward(self, x):
        h = self.inp(x).relu()
        for layer in self.hidden:
            h = layer(h).relu()
        return self.out(h)
