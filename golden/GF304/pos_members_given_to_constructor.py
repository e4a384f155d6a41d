# GF304 positive: the ensemble copies the members it is given into a plain list;
# the only construction in the file passes two linear heads, which are never
# registered. Detect only: another file may pass plain callables.
import torch
import torch.nn as nn


class Ensemble(nn.Module):
    def __init__(self, members):
        super().__init__()
        self.members = []
        for member in members:
            self.members.append(member)

    def forward(self, x):
        return torch.stack([m(x) for m in self.members]).mean(0)


ens = Ensemble([nn.Linear(6, 2), nn.Linear(6, 2)])
