# GF208 positive: the helper looks like the size-normalised metrics that are left alone,
# but it returns the squared error itself (no `.item()`), divided by the number it is
# handed. That is a tensor carrying the model output's graph, and the running total
# chains one graph per batch until the epoch ends.
import torch
import torch.nn as nn

net = nn.Linear(6, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
pairs = [(torch.randn(4, 6), torch.randn(4, 1)) for _ in range(5)]
n_rows = len(pairs) * 4


def scaled_error(pred, target, size):
    return ((pred - target) ** 2).sum() / size


def epoch():
    total = 0.0
    for xb, yb in pairs:
        pred = net(xb)
        err = ((pred - yb) ** 2).mean()
        opt.zero_grad()
        err.backward()
        opt.step()
        total += scaled_error(pred, yb, n_rows)
    return total
