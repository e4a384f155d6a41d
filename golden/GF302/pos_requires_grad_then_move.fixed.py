# GF302 positive: `.requires_grad_()` before the move has the same effect as
# `requires_grad=True` in the factory; `device` is a function argument.
import torch


def make_temperature(device):
    temperature = torch.ones(1, device=device, requires_grad=True)
    return temperature
