# GF306 positive: checkpoint_sequential on the network's input, which is data.
# Without the flag each segment but the last runs through the reentrant
# checkpoint, which builds no graph for an input that does not require grad:
# the first segment's layers get None gradients and never train.
import torch
import torch.nn as nn
from torch.utils import checkpoint as cp


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(8, 16), nn.ReLU(),
            nn.Linear(16, 16), nn.ReLU(),
            nn.Linear(16, 2),
        )

    def forward(self, x):
        return cp.checkpoint_sequential(self.layers, 2, x, use_reentrant=False)


model = Net()
model(torch.randn(4, 8)).sum().backward()
