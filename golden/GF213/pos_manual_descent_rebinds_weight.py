# GF213 positive: manual gradient descent that rebinds the weight to w - lr * w.grad:
# from the second iteration w is a non-leaf, w.grad is None and the update fails.
import torch

x = torch.randn(64, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5])


def fit(steps=100, lr=0.1):
    w = torch.randn(3, requires_grad=True)
    for _ in range(steps):
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        w = w - lr * w.grad
    return w
