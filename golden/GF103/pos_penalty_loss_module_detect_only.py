# GF103 positive, detect only: a regulariser defined alone in a loss/penalty
# module. It runs between forward and backward wherever it is added to the
# loss, but neither its call site nor the optimizer step is in this file, so
# GF103 reports it without a fix.
import torch
import torch.nn as nn


def clipped_l2_penalty(module: nn.Module, weight=5e-4, bound=3.0):
    """L2 penalty on the module's weight, keeping it in [-bound, bound]."""
    module.weight.data = torch.clamp(module.weight.data, -bound, bound)
    return weight * module.weight.pow(2).sum()


def orthogonality_penalty(module: nn.Module, weight=1e-3):
    w = module.weight.flatten(1)
    gram = w @ w.t()
    eye = torch.eye(gram.shape[0], device=w.device)
    return weight * (gram - eye).pow(2).sum()
