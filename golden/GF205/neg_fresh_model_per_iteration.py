# GF205 negative: a test that builds a new module and a new optimizer over its
# parameters on every iteration and takes a single step with each. The parameters
# of one iteration are never stepped again, so no gradient accumulates.
import itertools

import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, 1)

    def forward(self, x):
        return self.proj(x).squeeze(-1)


def test_every_parameter_moves():
    for width, scale in itertools.product([2, 5], [0.5, 2.0]):
        scorer = Scorer(width)
        before = {n: p.detach().clone() for n, p in scorer.named_parameters()}
        learnable = {n: p for n, p in scorer.named_parameters() if p.requires_grad}
        scorer(scale * torch.randn(4, width)).sum().backward()
        sgd = torch.optim.SGD(learnable.values(), lr=1.0)
        sgd.step()
        for n, p in learnable.items():
            assert not torch.equal(p, before[n])
