# GF304 negative: a plain list of a helper module class of this file that holds
# no parameter or buffer (an int it only uses in arithmetic and a padding layer):
# registering the list would change nothing. Members given as plain functions
# are not modules either.
import torch
import torch.nn as nn


class Shift(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k
        self.pad = nn.ReplicationPad1d((k, 0))

    def forward(self, x):
        return self.pad(x)[..., : x.shape[-1]] * (1.0 / (self.k + 1))


class MultiShift(nn.Module):
    def __init__(self, ks=(1, 2, 4)):
        super().__init__()
        self.shifts = [Shift(k) for k in ks]

    def forward(self, x):
        return sum(s(x) for s in self.shifts)


class Mixer(nn.Module):
    def __init__(self, fns):
        super().__init__()
        self.fns = []
        for fn in fns:
            self.fns.append(fn)

    def forward(self, x):
        return sum(f(x) for f in self.fns)


mix = Mixer([torch.tanh, torch.sigmoid])
