# GF305 positive where it matters: a forward hook clamps the output, and
# `model.forward(x)` skips it. The rewrite runs the hook (expected change).
import torch
import torch.nn as nn


def clamp_hook(module, inputs, output):
    return output.clamp(-0.1, 0.1)


def predict(x):
    model = nn.Linear(6, 3)
    model.register_forward_hook(clamp_hook)
    return model.forward(x)
