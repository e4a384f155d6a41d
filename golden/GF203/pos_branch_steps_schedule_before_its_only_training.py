# GF203 positive without a fix: the first epochs train the head alone with its own
# optimizer; from the `else:` on, the schedule of the full-model optimizer is stepped
# and only then does the helper run that optimizer's first steps. That optimizer is
# stepped nowhere else, so the first pass through the branch skips the schedule's
# first value whatever epoch it comes at (PyTorch warns there).
import torch
import torch.nn as nn
import torch.nn.functional as F


def run_epoch(net, batches, opt):
    for x, y in batches:
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()


def fit(epochs=6, head_epochs=2):
    net = nn.Sequential(nn.Linear(7, 12), nn.ReLU(), nn.Linear(12, 4))
    head_opt = torch.optim.SGD(net[2].parameters(), lr=0.05)
    full_opt = torch.optim.SGD(net.parameters(), lr=0.05)
    full_sched = torch.optim.lr_scheduler.ExponentialLR(full_opt, gamma=0.8)
    batches = [(torch.randn(3, 7), torch.randint(0, 4, (3,))) for _ in range(4)]
    for epoch in range(epochs):
        if epoch < head_epochs:
            run_epoch(net, batches, head_opt)
        else:
            full_sched.step()
            run_epoch(net, batches, full_opt)


if __name__ == "__main__":
    fit()
