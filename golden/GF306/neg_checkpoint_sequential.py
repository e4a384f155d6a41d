# GF306 negative: checkpoint_sequential is a separate API that this rule does
# not cover (it has the same default; see the rule's documentation).
import torch.nn as nn
from torch.utils.checkpoint import checkpoint_sequential


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))

    def forward(self, x):
        return checkpoint_sequential(self.seq, 2, x, use_reentrant=False)
