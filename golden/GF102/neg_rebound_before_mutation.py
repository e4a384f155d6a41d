# GF102 negative: `f` is rebound out-of-place (`f = self.proj(f)`) before the
# in-place scale, so `f *= self.scale` hits a new tensor, not the one that
# `self.last_feat` aliases. (No GF101 either: Linear output, float scale.)
import torch.nn as nn
import torch.nn.functional as F


class ScaledClassifier(nn.Module):
    def __init__(self, dim=256, n_cls=100, scale=16.0):
        super().__init__()
        self.backbone = nn.Linear(784, dim)
        self.proj = nn.Linear(dim, n_cls)
        self.scale = scale
        self.last_feat = None

    def forward(self, x):
        f = F.relu(self.backbone(x))
        self.last_feat = f.detach()
        f = self.proj(f)
        f *= self.scale
        return f
