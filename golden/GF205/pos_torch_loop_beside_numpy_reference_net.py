# GF205 positive: the file keeps a numpy reference network (its `backward` chains the
# layers' hand-written gradients) to compare against, but the loop that trains is
# torch's: `loss` is a criterion's result, autograd adds into `.grad` at every
# `loss.backward()`, and nothing clears it, so each step uses the running sum.
import numpy as np
import torch
import torch.nn as nn


class referenceNet:
    def __init__(self, layers):
        self.layers = layers

    def backward(self, grad):
        for layer in reversed(self.layers):
            grad = layer.backward(grad)
        return grad


model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
crit = nn.CrossEntropyLoss()
batches = [(torch.randn(10, 4), torch.randint(0, 3, (10,))) for _ in range(3)]

for epoch in range(5):
    for xb, yb in batches:
        loss = crit(model(xb), yb)
        loss.backward()
        opt.step()
