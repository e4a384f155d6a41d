# GF211 negative: validation runs inside a context manager that switches to eval
# mode and restores the previous mode on exit.
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F


@contextlib.contextmanager
def evaluating(net):
    was_training = net.training
    try:
        net.eval()
        yield net
    finally:
        if was_training:
            net.train()


def fit(train_loader, val_loader, epochs=5):
    model = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        for x, y in train_loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        with evaluating(model), torch.no_grad():
            print(epoch, sum(F.cross_entropy(model(x), y).item() for x, y in val_loader))
