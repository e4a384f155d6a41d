# GF303 negative: moving a parameter's data in place keeps the Parameter object
# (and its registration).
import torch
import torch.nn as nn


class Memory(nn.Module):
    def __init__(self):
        super().__init__()
        self.keys = nn.Parameter(torch.randn(32, 8))
        self.keys.data = self.keys.data.to("cuda")

    def forward(self, q):
        return q @ self.keys.t()
