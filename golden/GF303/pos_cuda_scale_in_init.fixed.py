# GF303 positive: `.cuda()` after the wrap. The Linear layers are registered;
# the learnable scale is not.
import torch
import torch.nn as nn


class ScaledHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(32, 8)
        self.scale = nn.Parameter(torch.ones(8).cuda())

    def forward(self, x):
        return self.proj(x) * self.scale
