# GF102 positive, plain-name alias: `vis = out.detach()` then `vis.clamp_(0, 1)`
# for the preview also clamps `out`, which tanh and the loss use next.
# Linear does not save its output, so nothing raises: the gradients change
# silently. Fix: `vis = out.detach().clone()`.
import torch
import torch.nn as nn


class Colorizer(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.fc = nn.Linear(dim, 3 * 16 * 16)
        self.previews = []

    def forward(self, x):
        out = self.fc(x)
        vis = out.detach()
        vis.clamp_(0, 1)
        self.previews.append(vis.view(-1, 3, 16, 16))
        return torch.tanh(out)
