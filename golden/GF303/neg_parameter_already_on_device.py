# GF303 negative: the data is moved to (or created on) the device before it is wrapped,
# so the outer `.to(device)` finds the Parameter already there and returns it unchanged:
# both stay registered and train.
import torch
import torch.nn as nn


class AdaptiveAdjacency(nn.Module):
    def __init__(self, device, nodes=7, dim=4):
        super().__init__()
        self.src = nn.Parameter(torch.randn(nodes, dim).to(device), requires_grad=True).to(device)
        self.dst = nn.Parameter(torch.randn(dim, nodes, device=device)).to(device)

    def forward(self):
        return torch.softmax(torch.relu(self.src @ self.dst), dim=1)
