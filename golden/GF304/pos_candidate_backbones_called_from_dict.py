# GF304 positive: the dict of candidate backbones is read in forward itself
# (`self.candidates[self.arch](x)`): the backbone that runs is in no registered attribute,
# so its parameters are missing from parameters() and state_dict.
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, arch, dim):
        super().__init__()
        self.arch = arch
        self.candidates = {"small": nn.Conv2d(3, 16, 3), "large": nn.Conv2d(3, 64, 3)}
        self.head = nn.LazyLinear(dim)

    def forward(self, x):
        return self.head(self.candidates[self.arch](x).flatten(1))
