# GF101 positive, item assignment: forcing the first gate open with
# `gate[:, 0] = 1.0` writes into the sigmoid's output, which sigmoid saved for
# its backward. backward() raises "modified by an inplace operation" (the
# forums' most common cause of that error). No rewrite: clone first.
import torch
import torch.nn as nn


class GatedMixer(nn.Module):
    def __init__(self, dim=16, experts=4):
        super().__init__()
        self.router = nn.Linear(dim, experts)

    def forward(self, x):
        gate = torch.sigmoid(self.router(x))
        gate[:, 0] = 1.0
        return gate


mixer = GatedMixer()
mixer(torch.randn(8, 16)).sum().backward()
