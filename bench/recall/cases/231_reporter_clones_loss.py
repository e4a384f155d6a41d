"""Source: https://github.com/pfnet/pytorch-pfn-extras/pull/49
Title: Use detach instead of clone to avoid retention of computational graph in reporter
What went wrong: the reporting utility stores each reported value with `value.clone()` and its
summary adds it to a running total; `clone()` keeps the autograd history, so reporting the
training loss every iteration retains all the graphs (the fix uses `detach()`).
runs: trains; the summary total carries a grad_fn over all iterations (the run prints it)
scope: extension
"""
import torch
import torch.nn as nn


class Summary:
    def __init__(self):
        self._x = 0.0
        self._n = 0

    def add(self, value):
        self._x += value
        self._n += 1

    def compute_mean(self):
        return self._x / self._n


summary = Summary()
model = nn.Linear(6, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for it in range(5):
    x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    summary.add(loss.clone())  # expect: GF208
print(summary._x.grad_fn, float(summary.compute_mean()))
