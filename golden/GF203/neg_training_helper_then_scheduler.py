# GF203 negative: epoch loops around a training helper that are correct. The first
# steps the schedule after the helper; the second skips it on the first epoch; the
# third steps a ReduceLROnPlateau on a metric; the fourth steps a schedule built on
# another optimizer than the one the helper steps; and the factory-built `lr_sched`
# below is not handed the optimizer, so what it schedules is not shown.
import torch
import torch.nn as nn
import torch.nn.functional as F


def train_one_epoch(net, batches, opt):
    for x, y in batches:
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
    return 0.0


def fit(net, batches, epochs=4):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    other = torch.optim.SGD(net.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
    side = torch.optim.lr_scheduler.StepLR(other, step_size=2)
    for epoch in range(epochs):
        train_one_epoch(net, batches, optimizer)
        scheduler.step()
    for epoch in range(epochs):
        if epoch > 0:
            scheduler.step()
        train_one_epoch(net, batches, optimizer)
    for epoch in range(epochs):
        loss = train_one_epoch(net, batches, optimizer)
        plateau.step(loss)
    for epoch in range(epochs):
        side.step()
        train_one_epoch(net, batches, optimizer)


def loop(net, batches, make_warmup, cfg):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    lr_sched = make_warmup(cfg)
    for x, y in batches:
        lr_sched.step()
        optimizer.zero_grad()
        F.cross_entropy(net(x), y).backward()
        optimizer.step()


if __name__ == "__main__":
    fit(nn.Linear(5, 3), [(torch.randn(4, 5), torch.randint(0, 3, (4,)))])
