# GF213 negative: the standard in-place update under torch.no_grad() keeps the
# leaf.
import torch

x = torch.randn(64, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5])


def fit_in_place(steps=100, lr=0.1):
    w = torch.randn(3, requires_grad=True)
    for _ in range(steps):
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None
    return w
