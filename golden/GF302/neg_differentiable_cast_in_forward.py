# GF302 negative: intentional differentiable casts and moves of activations in
# forward. Their inputs are not freshly created leaves, and the copy is meant to
# stay in the graph.
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        h = self.fc(x).double()
        mask = torch.ones_like(h).to(h.device)
        return (h * mask).float()
