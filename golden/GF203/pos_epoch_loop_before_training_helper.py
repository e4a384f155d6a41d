# GF203 positive: the epoch loop steps the schedule, then calls a helper of this file
# that runs one epoch of training with the optimizer it is given. The first epoch's
# optimizer steps already use the second value of the schedule.
import torch
import torch.nn as nn
import torch.nn.functional as F


def train_one_epoch(net, batches, opt):
    net.train()
    for x, y in batches:
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()


def fit(epochs=4):
    net = nn.Linear(5, 3)
    batches = [(torch.randn(4, 5), torch.randint(0, 3, (4,))) for _ in range(3)]
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    for epoch in range(epochs):
        scheduler.step()
        train_one_epoch(net, batches, optimizer)


if __name__ == "__main__":
    fit()
