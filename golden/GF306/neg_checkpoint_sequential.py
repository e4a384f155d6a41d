# GF306 negative: checkpoint_sequential with the flag given, by keyword or as its
# fourth positional argument (an explicit choice either way), or with *args that
# may hold it.
import torch.nn as nn
from torch.utils.checkpoint import checkpoint_sequential


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))

    def forward(self, x):
        return checkpoint_sequential(self.seq, 2, x, use_reentrant=False)


class Positional(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))

    def forward(self, x):
        return checkpoint_sequential(self.seq, 2, x, True)


def run_segments(seq, *args):
    return checkpoint_sequential(seq, *args)
