# GF203 negative: the same per-epoch functions with the scheduler as an
# argument, written correctly or with a scheduler gradfix cannot vouch for.
# `fit_one_epoch` steps it after its batch loop (the documented order).
# `fit_with_warmup` steps first, but what it is given is the file's own
# `LinearWarmup` class, no torch LRScheduler: its contract may well be to set
# the next rate before the update.
import torch
import torch.nn as nn
import torch.nn.functional as F


class LinearWarmup:
    def __init__(self, opt, steps):
        self.opt, self.steps, self.n = opt, steps, 0

    def step(self):
        self.n += 1
        for group in self.opt.param_groups:
            group["lr"] = 0.05 * min(1.0, self.n / self.steps)


def fit_one_epoch(net, batches, opt, sched):
    net.train()
    for inputs, labels in batches:
        opt.zero_grad()
        loss = F.cross_entropy(net(inputs), labels)
        loss.backward()
        opt.step()
    sched.step()


def fit_with_warmup(net, batches, opt, warmup):
    warmup.step()
    for inputs, labels in batches:
        opt.zero_grad()
        F.cross_entropy(net(inputs), labels).backward()
        opt.step()


def main():
    net = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    warmup = LinearWarmup(opt, 3)
    batches = [(torch.randn(16, 20), torch.randint(0, 4, (16,))) for _ in range(5)]
    for _epoch in range(6):
        fit_one_epoch(net, batches, opt, sched)
        fit_with_warmup(net, batches, opt, warmup)


if __name__ == "__main__":
    main()
