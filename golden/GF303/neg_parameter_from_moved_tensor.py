# GF303 negative: the tensor is moved first and then wrapped: the correct form.
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, device="cpu"):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(16, 4).to(device))
        self.b = nn.Parameter(torch.zeros(4).cuda())
        self.t = nn.Parameter(torch.ones(1, dtype=torch.float64))

    def forward(self, x):
        return x @ self.w + self.b
