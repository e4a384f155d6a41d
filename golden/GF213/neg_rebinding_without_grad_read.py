# GF213 negative: the rebinding is only used in the forward computation and no
# .grad is read, so backward reaches the leaf through it as intended.
import torch


def forward_only(scale):
    a = torch.rand(3, requires_grad=True)
    b = a * scale
    a = torch.sigmoid(a)
    return (a * b).sum()
