# GF308 negative: a submodule called `softmax` whose constructor this file cannot see
# (a factory of another package) may be anything; its name alone shows no softmax.
import torch
import torch.nn as nn
from heads import make_head


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 6)
        self.softmax = make_head(6)

    def forward(self, x):
        return self.softmax(self.proj(x))


scorer = Scorer()
loss = nn.functional.cross_entropy(scorer(torch.randn(5, 16)), torch.randint(0, 6, (5,)))
loss.backward()
