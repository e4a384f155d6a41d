# GF303 negative: calls after the wrap that return the Parameter itself:
# `.requires_grad_(False)` and `.float()` of a float32 parameter.
import torch
import torch.nn as nn


class Frozen(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(10, 4)).requires_grad_(False)
        self.bias = nn.Parameter(torch.zeros(4)).float()

    def forward(self, idx):
        return self.table[idx] + self.bias
