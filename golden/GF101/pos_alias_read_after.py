# GF101 positive, alias variant: `skip = h` keeps a second name on the same
# tensor and is read after the in-place divide. GF101 still fires and offers
# `h = h / h.norm(...)`, but that changes what `skip` sees (in-place updated
# both names), so the verifier reports the rewrite as failed.
import torch
import torch.nn as nn


class NormResidualBlock(nn.Module):
    def __init__(self, dim=128):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.proj(x)
        skip = h
        h /= h.norm(dim=1, keepdim=True)
        return h + skip
