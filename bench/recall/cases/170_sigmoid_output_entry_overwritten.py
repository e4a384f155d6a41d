"""Source: https://github.com/pytorch/pytorch/issues/9391
Title: backward pass different behaviors with inplace operation
What went wrong: a gate is computed with `sigmoid` and one entry of the result is then
overwritten by item assignment; sigmoid's backward needs its own output, so backward() fails,
while the same gate written out by hand as `1 / (1 + exp(-a))` does not save its output and runs.
runs: raises RuntimeError (modified by an inplace operation: the [5, 4] output 0 of Sigmoid is at version 1)
scope: documented
"""
import torch
import torch.nn as nn


class GatedScores(nn.Module):
    def __init__(self, n_in=6, n_out=4):
        super().__init__()
        self.proj = nn.Linear(n_in, n_out)

    def forward(self, x):
        gate = self.proj(x).sigmoid()
        gate[:, 1] = 2.0  # expect: GF101
        return (gate * x[:, :4]).sum(dim=1)


model = GatedScores()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 6), torch.randn(5)
loss = ((model(x) - y) ** 2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
