# GF213 positive: a leaf made with .requires_grad_() and then rescaled by
# rebinding: the later theta.grad belongs to the rescaled non-leaf (None).
import torch


def calibrate(logits, labels, steps=50, lr=0.01):
    theta = torch.zeros(1).requires_grad_()
    theta = theta * 2.0
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(logits / theta.exp(), labels)
        loss.backward()
        print(theta.grad)
    return theta
