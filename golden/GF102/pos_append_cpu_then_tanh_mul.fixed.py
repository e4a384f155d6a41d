# GF102 positive (list alias via `.detach().cpu()`, which aliases on CPU)
# together with GF101: the activation list keeps `z.detach().cpu()`, then
# `z.mul_(self.gain)` rescales the tanh output in place. tanh saved its output
# (GF101 crash) and the stored activations get rescaled too (GF102).
import torch
import torch.nn as nn


class TanhEncoder(nn.Module):
    def __init__(self, dim=64, gain=1.5):
        super().__init__()
        self.enc = nn.Linear(dim, dim)
        self.gain = gain
        self.activations = []

    def forward(self, x):
        z = torch.tanh(self.enc(x))
        self.activations.append(z.detach().clone().cpu())
        z = z.mul(self.gain)
        return z
