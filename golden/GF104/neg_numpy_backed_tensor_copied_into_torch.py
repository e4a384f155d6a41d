# GF104 negative: a from-scratch course framework keeps its values in a numpy array
# named `data`. A test helper copies that array into a fresh torch leaf with
# `torch.tensor(...)` and marks it as requiring grad, then differentiates it to check
# the course's own gradients. There is no `Tensor.data` here, and nothing is cut.
import numpy as np
import torch


class Box:
    def __init__(self, values, requires_grad=False):
        self.data = np.asarray(values, dtype=np.float64)
        self.requires_grad = requires_grad
        self.grad = None


def as_reference(box):
    ref = torch.tensor(box.data).double()
    ref.requires_grad = box.requires_grad
    return ref


for trial in range(2):
    a = Box(np.random.randn(3, 2), requires_grad=True)
    b = Box(np.random.randn(3, 2), requires_grad=True)
    loss = (as_reference(a) * as_reference(b)).sum() + torch.tensor(a.data).sum()
    loss.backward()
