"""A warm-up scheduler of the project (a plain class, not a torch LRScheduler) whose `step()` sets the next lr
before the update, by design; it reaches `train` as a parameter. PyTorch does not warn, and no value is skipped."""
import torch


class WarmupScheduler:
    def __init__(self, optimizer, lr_max, n_iter):
        self.optimizer, self.lr_max, self.n_iter, self.it = optimizer, lr_max, n_iter, 0

    def step(self):
        self.it += 1
        lr = self.lr_max * min(1.0, self.it / self.n_iter)
        for g in self.optimizer.param_groups:
            g["lr"] = lr


def train(model, loader, optimizer, scheduler):
    for x, y in loader:
        loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        scheduler.step()
        optimizer.step()


model = torch.nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = WarmupScheduler(opt, 0.1, 10)
for x in range(3):
    loss = model(torch.randn(3, 2)).sum()
    opt.zero_grad()
    loss.backward()
    sched.step()
    opt.step()
