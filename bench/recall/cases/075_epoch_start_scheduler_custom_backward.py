"""Source: https://github.com/SsnL/dataset-distillation/blob/master/train_distilled_image.py
Title: (held-out survey, bench/HELDOUT.md recall) distilled-image trainer
What went wrong: one loop runs over (epoch, iteration, batch) and steps the StepLR schedule
when the iteration index is 0, before that iteration's optimizer step; the gradients come
from a method of the trainer named `backward` (torch.autograd.backward), called once per
sampled network in an inner loop, and the optimizer steps after that loop.
runs: trains; PyTorch warns that lr_scheduler.step() ran before optimizer.step()
scope: extension (the backward pass is in a method of the class, through torch.autograd.backward)
"""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, epochs=3, iters=4):
        self.epochs, self.iters = epochs, iters
        self.data = torch.randn(4, 6, requires_grad=True)
        self.nets = [nn.Linear(6, 1) for _ in range(3)]
        self.optimizer = torch.optim.Adam([self.data], lr=0.01)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=1, gamma=0.5)

    def batches(self):
        for epoch in range(self.epochs):
            for it in range(self.iters):
                yield epoch, it, torch.randn(4, 6)

    def backward(self, loss):
        torch.autograd.backward([loss], [torch.ones_like(loss)])

    def train(self):
        for epoch, it, x in self.batches():
            if it == 0:
                self.scheduler.step()  # expect: GF203
            self.optimizer.zero_grad()
            for net in self.nets:
                loss = (net(self.data * x) ** 2).mean()
                self.backward(loss)
            self.optimizer.step()


if __name__ == "__main__":
    Trainer().train()
