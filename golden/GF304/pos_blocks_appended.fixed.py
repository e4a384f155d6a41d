# GF304 positive: an empty list filled in a loop. `nn.ModuleList()` has
# `append`, so only the initial value changes.
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return x + self.fc(self.norm(x))


class Stack(nn.Module):
    def __init__(self, dim=8, n=2):
        super().__init__()
        self.embed = nn.Linear(4, dim)
        self.blocks = nn.ModuleList()
        for _ in range(n):
            self.blocks.append(Block(dim))

    def forward(self, x):
        x = self.embed(x)
        for blk in self.blocks:
            x = blk(x)
        return x
