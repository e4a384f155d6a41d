# GF304 positive: each stage is appended as a (conv, norm) tuple to a plain list,
# so no stage is registered. Detect only: nn.ModuleList holds modules, not tuples.
import torch.nn as nn


class Tower(nn.Module):
    def __init__(self, depth=3, width=8):
        super().__init__()
        self.stages = []
        for _ in range(depth):
            self.stages.append((nn.Conv1d(width, width, 3, padding=1), nn.BatchNorm1d(width)))
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        for conv, norm in self.stages:
            x = norm(conv(x)).relu()
        return self.out(x.mean(-1))
