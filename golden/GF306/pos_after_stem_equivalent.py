# GF306 positive where nothing is lost yet: the checkpointed block follows a
# stem with parameters, so its input requires grad and the reentrant variant
# works. The flag still makes the choice explicit (torch warns without it);
# the verifier finds the gradients unchanged (equivalent).
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
