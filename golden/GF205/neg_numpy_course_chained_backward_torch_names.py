# GF205 negative: a from-scratch numpy course exercise. Its layers, loss and optimizer
# come from the course's own modules (star imports gradfix cannot resolve) and carry
# torch's names: `CrossEntropyLoss`, `SGD`. The network class is spelled in lower case
# and its `backward` chains each layer's hand-written gradient (`grad = layer.backward(
# grad)`), so every layer assigns its weight gradient afresh: there is no `.grad` that
# accumulates and nothing to zero.
import numpy as np

from course_layers import *
from course_optim import SGD


class twoLayerNet:
    def __init__(self):
        self.layers = [Linear(4, 8), ReLU(), Linear(8, 3)]

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def backward(self, grad):
        for layer in reversed(self.layers):
            grad = layer.backward(grad)
        return grad


if __name__ == "__main__":
    net = twoLayerNet()
    crit = CrossEntropyLoss()
    optimizer = SGD(net, lr=0.1)
    inputs = np.random.randn(30, 4)
    labels = np.eye(3)[np.random.randint(0, 3, 30)]
    for epoch in range(20):
        for start in range(0, 30, 10):
            xb, yb = inputs[start:start + 10], labels[start:start + 10]
            scores = net.forward(xb)
            value = crit.forward(scores, yb)
            grad = crit.backward()
            net.backward(grad)
            optimizer.step()
