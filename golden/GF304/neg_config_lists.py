# GF304 negative: plain containers of ints, strings and configs are fine.
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, dims=(3, 16, 32)):
        super().__init__()
        self.dims = [3, 16, 32]
        self.names = ["conv1", "conv2"]
        self.cfg = {"dropout": 0.1, "act": "relu"}
        self.shapes = tuple(dims)
        self.fc = nn.Linear(dims[0], dims[-1])

    def forward(self, x):
        return self.fc(x)
