"""A generator maps tanh's output from [-1, 1] to [0, 1] with a chain of in-place calls.

tanh saved its output for backward, and `img.add_(1).div_(2)` writes into it twice: backward()
raises. The whole chain is rewritten out of place.
"""
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self, latent=16, pixels=64):
        super().__init__()
        self.proj = nn.Linear(latent, pixels)

    def forward(self, z):
        img = torch.tanh(self.proj(z))
        img = img.add(1.0).div(2.0)  # rescale to [0, 1]
        return img
