# GF208 positive: two running meters of this file keep every step's graph. The
# first is handed `loss.clone()` (a clone is still part of the graph); the second
# adds what a local reduce helper returns, and that helper only clones and scales
# the tensor it is given. Detect only: hand the meters `loss.item()`.
import torch
import torch.nn as nn


def mean_over_workers(t, workers=1):
    return t.clone() / workers


class Tally:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def push(self, v):
        self.total += v
        self.count += 1


class Averager:
    def __init__(self):
        self.acc = torch.zeros(())

    def update(self, v):
        self.acc += mean_over_workers(v)


net = nn.Linear(5, 3)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
tally, avg = Tally(), Averager()
for step in range(4):
    x, y = torch.randn(6, 5), torch.randint(0, 3, (6,))
    opt.zero_grad()
    loss = nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    tally.push(loss.clone())
    avg.update(loss)
print(tally.total.grad_fn is not None, avg.acc.grad_fn is not None)
