"""Small programs several test modules run gradfix on (written here, in our own words), and the
in-process CLI runner they use."""

import os

from click.testing import CliRunner

# an in-place normalisation of a Linear's output: GF101 fires on the `/=`, whose fix is safe
HEAD = """import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        h = self.fc(x)
        h /= h.norm(dim=1, keepdim=True) + 1e-6
        return h
"""

# a model file and a script that imports it and calls forward() directly (GF305 across files)
MODEL = '''\
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)
'''
TRAIN = '''\
import torch
from model import Net

net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for x in [torch.randn(3, 4)]:
    out = net.forward(x)
    opt.zero_grad()
    out.sum().backward()
    opt.step()
'''


def run(args, cwd, input=None):
    """`gradfix ARGS` in-process, in folder `cwd`."""
    from gradfix.cli.main import main

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, args, input=input, catch_exceptions=False)
    finally:
        os.chdir(old)
