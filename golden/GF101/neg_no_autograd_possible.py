# GF101 negative: nothing here can require grad, so autograd saves nothing and
# the in-place ops are plain arithmetic: a coordinate grid built with arange,
# a diffusion noise table derived from linspace, and a uint8 image batch
# converted and rescaled before it meets the model.
import torch
import torch.nn as nn


def noise_schedule(steps):
    betas = torch.linspace(1e-4, 0.02, steps)
    alphas = 1.0 - betas
    alphas_bar = torch.cumprod(alphas, dim=0)
    alphas_bar *= 0.999
    return alphas_bar.sqrt()


class PositionalNet(nn.Module):
    def __init__(self, size=8):
        super().__init__()
        self.proj = nn.Linear(2, 16)
        self.size = size

    def forward(self, img):
        grid = torch.arange(self.size).float()
        scale = grid.norm()
        grid /= scale
        pixels = img.float()
        pixels /= 255.0
        coords = torch.stack([grid, grid], dim=-1)
        return self.proj(coords) + pixels.mean()
