# GF305 negative: DistributedDataParallel does its work in forward() itself, and
# `forward` of a plain class of the file (a numpy model) is not a module's.
import numpy as np
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class NumpyMLP:
    def __init__(self, d_in, d_out):
        self.w = np.random.randn(d_in, d_out) * 0.01

    def forward(self, x):
        return np.maximum(x @ self.w, 0)


def reference(x):
    model = NumpyMLP(4, 2)
    return model.forward(x)


def train(rank, loader, opt_cls):
    model = DDP(nn.Linear(8, 2).to(rank), device_ids=[rank])
    opt = opt_cls(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = nn.functional.cross_entropy(model.forward(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
