# GF101 negative: a module's forward receives a list of feature maps and replaces its slots top-down. Writing
# `top[i - 1] = ...` rebinds a list element; no tensor is written in place, and backward runs.
import torch
from torch import nn


class TopDownFuse(nn.Module):
    def __init__(self, levels):
        super().__init__()
        self.w = nn.Parameter(torch.ones(2, levels))
        self.convs = nn.ModuleList(nn.Conv2d(4, 4, 1) for _ in range(levels))

    def forward(self, feats):
        w = torch.relu(self.w)
        top = feats
        for i in range(len(feats) - 1, 0, -1):
            top[i - 1] = w[0, i - 1] * top[i - 1] + w[1, i - 1] * top[i]
            top[i - 1] = self.convs[i - 1](top[i - 1])
        return top
