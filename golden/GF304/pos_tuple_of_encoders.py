# GF304 positive: a tuple of encoders (no parentheses in the source).
import torch
import torch.nn as nn


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.towers = nn.Linear(5, 3), nn.Linear(5, 3)

    def forward(self, x):
        return torch.cat([t(x) for t in self.towers], dim=-1)
