"""Loops whose elements are not shown to be modules: a ModuleDict iterated directly (its keys), a
plain Python list of callables, a list handed in by the caller, and a tuple of mixed objects."""
import torch.nn as nn


class Scorer:
    def forward(self, x):
        return x.sum()


class Router(nn.Module):
    def __init__(self, experts):
        super().__init__()
        self.table = nn.ModuleDict({"a": nn.Linear(4, 4)})
        self.experts = experts
        self.scorers = [Scorer(), Scorer()]

    def forward(self, x):
        names = []
        for key in self.table:
            names.append(key.forward if hasattr(key, "forward") else key)
        for expert in self.experts:
            x = expert.forward(x)
        total = 0
        for scorer in self.scorers:
            total = total + scorer.forward(x)
        return x, total, names
