import torch
import torch.nn as nn


class Learner:
    def __init__(self):
        self.net = nn.Linear(5, 1)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def accumulate(self, xb, yb, parts):
        err = nn.functional.mse_loss(self.net(xb), yb) / parts
        err.backward()

    def apply(self):
        self.opt.step()
        self.opt.zero_grad()


class OneShot:
    def __init__(self):
        self.net = nn.Linear(5, 1)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def fit_batch(self, xb, yb):
        self.opt.zero_grad()
        nn.functional.mse_loss(self.net(xb), yb).backward()

    def apply(self):
        self.opt.step()


learner = Learner()
chunks = [(torch.randn(3, 5), torch.randn(3, 1)) for _ in range(4)]
for epoch in range(3):
    for xb, yb in chunks:
        learner.accumulate(xb, yb, len(chunks))
    learner.apply()

# the step follows every call, inside the same loop: each batch's gradient is stepped
single = OneShot()
for xb, yb in chunks:
    single.fit_batch(xb, yb)
    single.apply()
