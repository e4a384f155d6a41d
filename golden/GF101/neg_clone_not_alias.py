# GF101 negative: the residual keeps a clone, not an alias, and the tensor
# divided in place is a Linear output that no op saved for backward.
import torch.nn as nn


class ScaledResidual(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.proj(x)
        skip = h.clone()
        h /= 2.0
        return self.out(h + skip)
