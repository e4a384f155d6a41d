# GF208 positive: the running sum is reset only every 50 batches (under an `if`), so between
# resets it adds 50 loss tensors and keeps all their graphs alive.
import torch
import torch.nn as nn


def train(net, batches, opt):
    crit = nn.CrossEntropyLoss()
    window = 0
    for i, (x, y) in enumerate(batches):
        if i % 50 == 0:
            window = 0
        loss = crit(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        window += loss.item()
