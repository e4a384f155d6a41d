import torch
import torch.nn as nn


class TwoTowerScorer(nn.Module):
    """Both containers start as builtin calls instead of `[]` / `{}`: still plain Python objects."""

    def __init__(self, width=16, depth=3):
        super().__init__()
        self.towers = list()
        for _ in range(depth):
            self.towers.append(nn.Linear(width, width))
        self.scales = dict()
        self.scales["left"] = nn.Parameter(torch.ones(width))
        self.scales["right"] = nn.Parameter(torch.ones(width))

    def forward(self, left, right):
        for tower in self.towers:
            left = torch.relu(tower(left))
        return (left * self.scales["left"] * right * self.scales["right"]).sum(-1)
