"""`nn.Parameter(torch.Tensor(n, 1)).to(device)` with `n` an argument: the data is made here, on the CPU.

`torch.Tensor(n, 1)` with two arguments reads them as sizes, so the caller's device says nothing about the
data; on a GPU `.to(device)` returns a plain copy and the weight is not registered.
"""
import torch
import torch.nn as nn


class DenseLinear(nn.Module):
    def __init__(self, n_dense=4, device="cpu"):
        super().__init__()
        self.weight = nn.Parameter(torch.Tensor(n_dense, 1)).to(device)
        nn.init.normal_(self.weight, std=1e-3)

    def forward(self, x):
        return x @ self.weight
