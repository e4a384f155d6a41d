import torch
import torch.nn as nn


class RunningStats(nn.Module):
    """`dict()` / `list()` that hold numbers, names and buffers, and `dict(...)` with content: nothing to register."""

    def __init__(self, width=8):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.history = list()
        self.history.append(0.0)
        self.names = dict()
        self.names["proj"] = "projection"
        self.settings = dict(momentum=0.9, eps=1e-5)
        self.register_buffer("mean", torch.zeros(width))

    def forward(self, x):
        out = self.proj(x)
        self.history.append(float(out.detach().mean()))
        return (out - self.mean) * self.settings["momentum"]
