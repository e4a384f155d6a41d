# GF208 positive (detect only): the loss tensor itself goes into a running
# average kept in an object. `RunningMean.add` sums what it is given, so the
# meter's total links every iteration's graph and memory grows each step. The
# meter's class is in this file, which shows that it keeps the value unchanged.
import torch
import torch.nn as nn


class RunningMean:
    def __init__(self):
        self.total = 0.0
        self.n = 0
        self.trace = []

    def add(self, value, weight=1):
        self.total += weight * value
        self.n += weight

    def log(self, value):
        self.trace.append(value)

    def mean(self):
        return self.total / max(self.n, 1)


model = nn.Sequential(nn.Linear(5, 10), nn.Tanh(), nn.Linear(10, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
meter = RunningMean()
history = RunningMean()
data = [(torch.randn(8, 5), torch.randn(8, 1)) for _ in range(6)]

for epoch in range(3):
    for x, y in data:
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        meter.add(loss, weight=x.size(0))
        history.log(loss)
    print(meter.mean())
