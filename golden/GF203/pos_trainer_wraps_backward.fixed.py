"""A trainer class whose own `backward(loss)` method calls autograd, and a schedule stepped first.

The class's `backward` wraps `loss.backward()`, so it is no hand-written gradient code: `self.backward(loss)`
is a backward pass, and the StepLR step at the top of each epoch runs before that epoch's optimizer step.
"""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.net = nn.Linear(5, 1)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.sched = torch.optim.lr_scheduler.StepLR(self.opt, step_size=2, gamma=0.5)

    def backward(self, loss):
        (loss * 0.5).backward()

    def fit(self, loader, epochs=4):
        for epoch in range(epochs):
            for x, y in loader:
                self.opt.zero_grad()
                loss = ((self.net(x) - y) ** 2).mean()
                self.backward(loss)
                self.opt.step()
            self.sched.step()
