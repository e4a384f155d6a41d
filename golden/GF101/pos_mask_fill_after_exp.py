# GF101 positive, masked item assignment: exp() saves its output, then the
# padding positions are zeroed by writing through a boolean mask into the same
# tensor. backward() raises; `scores = scores.masked_fill(pad, 0.0)` is the fix.
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)

    def forward(self, x, pad):
        scores = (self.q(x) @ self.k(x).transpose(-1, -2)).exp()
        scores[pad] = 0.0
        return scores / scores.sum(-1, keepdim=True)
