# GF304 positive: the loop registers a module under its own name, but not the one
# it appends to the plain list: the appended projections are still unregistered,
# so only they need `nn.ModuleList`.
import torch.nn as nn


class Mixer(nn.Module):
    def __init__(self, width=6, depth=2):
        super().__init__()
        self.projections = []
        for i in range(depth):
            norm = nn.LayerNorm(width)
            setattr(self, f"norm{i}", norm)
            self.projections.append(nn.Linear(width, width))

    def forward(self, x):
        for i, proj in enumerate(self.projections):
            x = proj(getattr(self, f"norm{i}")(x))
        return x
