# GF101 positive with `**=`: ReLU saves its output (threshold_backward reads
# the result), so squaring the activation in place makes backward raise.
# Squared-ReLU MLP (Primer-style).
import torch
import torch.nn as nn
import torch.nn.functional as F


class SquaredReLUMLP(nn.Module):
    def __init__(self, dim=256, hidden=1024):
        super().__init__()
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x):
        a = F.relu(self.up(x))
        a = a ** 2
        return self.down(a)
