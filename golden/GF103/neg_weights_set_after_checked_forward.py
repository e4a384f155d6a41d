# GF103 negative: a notebook-style self-test of a low-rank adapter. The first
# forward's result only feeds an `assert`, so no graph of it reaches backward().
# The adapter's factors are then set through `.data` to known values, and only
# after that does the forward run whose loss is backpropagated: the writes are
# set-up for that forward, not changes between a forward and its backward.
import torch
import torch.nn as nn
import torch.nn.functional as F


class LowRank(nn.Module):
    def __init__(self, base: nn.Linear, rank: int):
        super().__init__()
        self.base = base
        self.down = nn.Parameter(torch.zeros(base.in_features, rank))
        self.up = nn.Parameter(torch.zeros(rank, base.out_features))

    def forward(self, x):
        return self.base(x) + x @ self.down @ self.up


base = nn.Linear(16, 16)
base.weight.data[...] = torch.eye(16)
probe = LowRank(base, rank=2)

assert torch.allclose(probe(torch.zeros(1, 16)), base.bias), "the adapter must start as a no-op"

probe.down.data[...] = torch.linspace(-0.2, 0.3, 16 * 2).view(16, 2)
probe.up.data[...] = torch.linspace(0.4, -0.1, 2 * 16).view(2, 16)

check_loss = F.mse_loss(probe(torch.ones(1, 16)).squeeze(), torch.linspace(-1, 1, 16))
check_loss.backward()
assert probe.down.grad is not None and probe.up.grad is not None
print("adapter gradients flow")
