# GF211 negative: a gradient check of a hand-written batch norm against torch's builds a new
# `nn.BatchNorm1d` (`torch_layer`) at the top of every pass, backpropagates an upstream gradient
# through it in train mode, and then switches it to eval mode (to compare the inference path,
# elided here). The module evaluated is dropped at the end of the pass; the next pass's forward
# runs a fresh one, in train mode, so no eval mode carries over.
import torch
import torch.nn as nn


def check_batch_norm(n_in, layer_input, upstream_grad):
    for _ in range(100):
        torch_layer = nn.BatchNorm1d(n_in)
        torch_out = torch_layer(layer_input)
        torch_out.backward(torch.from_numpy(upstream_grad))
        torch_layer.eval()
