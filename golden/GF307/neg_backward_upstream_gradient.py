"""A reference layer's gradients for a numpy upstream gradient: `out.backward(torch.tensor(upstream))` passes
Tensor.backward's `gradient` argument, which is not a loss; `out` still holds the layer's graph."""
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable


def reference_grads(channels_in, channels_out, width):
    layer = nn.Conv1d(channels_in, channels_out, 3)
    layer.weight = nn.Parameter(torch.randn(channels_out, channels_in, 3))
    inputs = Variable(torch.tensor(np.random.randn(2, channels_in, width)), requires_grad=True)
    out = layer(inputs)
    n, c, w = out.shape
    upstream = np.random.randn(n, c, w)
    out.backward(torch.tensor(upstream))
    return layer.weight.grad, inputs.grad
