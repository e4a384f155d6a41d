# GF305 negative: tuple assignments whose elements cannot be paired with
# modules: a pair returned by a helper (unpacked from a call, not shown to be
# modules) and a starred target. `.forward()` on an unknown receiver may be
# the only way to call it (a plain object with a forward method), so no finding.
import torch
import torch.nn as nn


def build_pair():
    return nn.Linear(4, 2), nn.Linear(4, 2)


class Scorer:
    def forward(self, s):
        return s.sum(1, keepdim=True)


class Agent:
    def __init__(self):
        self.online, self.target = build_pair()
        self.first, *self.rest = [Scorer(), Scorer(), Scorer()]
        self.scorer, self.scale = Scorer(), 2.0

    def values(self, s):
        return self.online.forward(s) + self.target.forward(s) + self.first.forward(s) * self.scale \
            + self.scorer.forward(s)
