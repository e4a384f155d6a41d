# GF304 negative: a list that is rebuilt into a ModuleList, or whose modules are
# registered through nn.Sequential, is only a second reference.
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [nn.Linear(4, 4), nn.ReLU()]
        self.body = nn.ModuleList(layers)
        self.parts = [nn.Linear(4, 4), nn.Linear(4, 4)]
        self.seq = nn.Sequential(*self.parts)
        self.blocks = []
        for _ in range(2):
            self.blocks.append(nn.Linear(4, 4))
        self.blocks = nn.ModuleList(self.blocks)
        self.enc = nn.Linear(4, 4)
        self.all_layers = [self.enc, self.seq]

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.seq(self.enc(x))
