# A trap: the skip connection aliases `h`, so the in-place divide also divides
# what `skip` holds. The out-of-place rewrite would change the output; the
# verifier says `failed` and gradfix leaves this file alone.
import torch
import torch.nn as nn


class NormalizedResidual(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.proj(x)
        skip = h
        h /= h.norm(dim=1, keepdim=True)
        return h + skip
