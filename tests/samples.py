"""Small programs several test modules run gradfix on (written here, in our own words)."""

# an in-place normalisation of a Linear's output: GF101 fires on the `/=`, whose fix is safe
HEAD = """import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        h = self.fc(x)
        h /= h.norm(dim=1, keepdim=True) + 1e-6
        return h
"""
