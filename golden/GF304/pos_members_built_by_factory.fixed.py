import torch
import torch.nn as nn


def mlp_block(width, hidden):
    return nn.Sequential(nn.Linear(width, hidden), nn.GELU(), nn.Linear(hidden, width))


def make_norm(width):
    norm = nn.LayerNorm(width)
    return norm


class Mixer(nn.Module):
    """The blocks come from helper functions of the file that always return modules."""

    def __init__(self, width=16, depth=2):
        super().__init__()
        self.blocks = nn.ModuleList([mlp_block(width, 2 * width) for _ in range(depth)])
        self.norms = nn.ModuleList()
        for _ in range(depth):
            self.norms.append(make_norm(width))

    def forward(self, x):
        for norm, block in zip(self.norms, self.blocks):
            x = x + block(norm(x))
        return x
