# GF211 negative: the same step-based validation written correctly, three ways. The
# first loop calls `model.train()` right after validating; the second sets train
# mode at the top of every batch; the third validates only on the last batch and
# then leaves the loop, so no batch of that pass trains afterwards.
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
train_batches = [(torch.randn(8, 10), torch.randint(0, 2, (8,))) for _ in range(10)]
val_batches = [(torch.randn(8, 10), torch.randint(0, 2, (8,))) for _ in range(2)]


def evaluate(model, batches):
    model.eval()
    with torch.no_grad():
        return sum(F.cross_entropy(model(x), y).item() for x, y in batches)


def run_restoring(steps):
    for i, (x, y) in enumerate(train_batches[:steps]):
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
        if i % 4 == 3:
            evaluate(net, val_batches)
            net.train()


def run_train_each_batch(steps):
    for i, (x, y) in enumerate(train_batches[:steps]):
        net.train()
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
        if i % 4 == 3:
            evaluate(net, val_batches)


def run_validate_last(steps):
    for i, (x, y) in enumerate(train_batches[:steps]):
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
        if i == steps - 1:
            evaluate(net, val_batches)
            break


if __name__ == "__main__":
    net.train()
    run_restoring(8)
    run_train_each_batch(8)
    run_validate_last(8)
