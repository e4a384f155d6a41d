# GF213 negative: the update is rebound from a detached tensor and made a leaf
# again with requires_grad_(), so w.grad is filled on every iteration.
import torch

x = torch.randn(64, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5])


def fit(steps=100, lr=0.1):
    w = torch.randn(3, requires_grad=True)
    for _ in range(steps):
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        w = w.detach() - lr * w.grad
        w.requires_grad_()
    return w
