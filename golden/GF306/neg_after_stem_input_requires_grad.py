# GF306 negative: the checkpointed block follows a stem with parameters, so its
# input requires grad and the reentrant variant builds the graph: gradients
# are the same with or without the flag (torch only warns that it should be
# explicit). No hazard to show, so no finding.
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(8, 8)
        self.block = nn.Sequential(nn.Linear(8, 8), nn.ReLU())

    def forward(self, x):
        h = torch.relu(self.stem(x))
        return checkpoint(self.block, h)
