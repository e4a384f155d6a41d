"""A from-scratch NumPy network: the model's `backward()` is a method the course wrote, not autograd's.

`running_loss += model.loss(x, y)` adds a NumPy float and `running_acc += model.accuracy(x, y)` a mean of
comparisons; no tensor, no graph. The file defines a class with its own `backward`, so `model.backward()`
on an object (a parameter here) is not taken for `loss.backward()`.
"""
import numpy as np


class Dense:
    def __init__(self, n_in, n_out):
        self.W = np.random.randn(n_in, n_out) * 0.1
        self.b = np.zeros(n_out)

    def forward(self, x):
        self.x = x
        return x @ self.W + self.b

    def backward(self, grad_out):
        self.dW = self.x.T @ grad_out
        self.db = grad_out.sum(axis=0)
        return grad_out @ self.W.T


class MeanSquared:
    def forward(self, pred, target):
        self.residual = pred - target
        return float((self.residual ** 2).mean())

    def backward(self):
        return 2.0 * self.residual / self.residual.size


class Regressor:
    def __init__(self):
        self.layer = Dense(3, 1)
        self.cost = MeanSquared()

    def loss(self, x, y):
        return self.cost.forward(self.layer.forward(x), y)

    def accuracy(self, x, y):
        return np.mean(np.abs(self.layer.forward(x) - y) < 0.5)

    def backward(self):
        self.layer.backward(self.cost.backward())


def train(model, batches, epochs=5, lr=0.05):
    for epoch in range(epochs):
        running_loss = 0.0
        running_acc = 0.0
        for x, y in batches:
            running_loss += model.loss(x, y)
            running_acc += model.accuracy(x, y)
            model.backward()
            model.layer.W -= lr * model.layer.dW
            model.layer.b -= lr * model.layer.db
        print(epoch, running_loss / len(batches), running_acc / len(batches))
