# GF208 negative: meters that hold no graph. The reduce helper detaches before it
# scales, the second helper rebinds its parameter to a number, and the clone is
# taken of a detached loss.
import torch
import torch.nn as nn


def detached_mean(t, workers=1):
    return t.detach() / workers


def as_float(t):
    t = t.item()
    return t


class Averager:
    def __init__(self):
        self.acc = 0.0
        self.seen = 0.0
        self.kept = 0.0

    def update(self, v):
        self.acc += detached_mean(v)
        self.seen += as_float(v)

    def keep(self, v):
        self.kept += v


net = nn.Linear(5, 3)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
avg = Averager()
for step in range(4):
    x, y = torch.randn(6, 5), torch.randint(0, 3, (6,))
    opt.zero_grad()
    loss = nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    avg.update(loss)
    avg.keep(loss.detach().clone())
print(avg.acc.grad_fn, avg.seen, avg.kept.grad_fn)
