"""Accuracy totals from helpers the file imports, spelled in camelCase or reached through their module:
a helper named for an accuracy counts argmax matches, which hold no graph (the name form is trusted only
for a helper the file does not define)."""
import torch
import torch.nn as nn

import evaluation
from evaluation import calcAccuracy


def fit(epochs=2):
    net = nn.Linear(6, 3)
    opt = torch.optim.Adam(net.parameters())
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        correct, acc_sum = 0, 0
        for _ in range(4):
            x, y = torch.randn(10, 6), torch.randint(0, 3, (10,))
            logits = net(x)
            loss = loss_fn(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            correct += evaluation.num_correct(logits, y)
            acc_sum += calcAccuracy(logits, y)
        print(epoch, correct, acc_sum / 4)
