# GF306 positive: the file's own `checkpoint` saves state to disk, and the
# module imports torch's `checkpoint` inside `forward`, where the local import is
# what the call sees. Resolved by scope, that call is torch's reentrant default:
# the first block's input is data, so its parameters would get None gradients.
import torch
import torch.nn as nn


def checkpoint(state, path):
    torch.save(state, path)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(12, 24), nn.Tanh(), nn.Linear(24, 12))
        self.head = nn.Linear(12, 3)

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint

        return self.head(checkpoint(self.stem, x, use_reentrant=False))


model = Net()
model(torch.randn(4, 12)).sum().backward()
