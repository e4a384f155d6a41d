# GF305 positive: a layer wrapped in hook-based weight_norm, called through
# forward(). The weight is recomputed from weight_g and weight_v by a forward
# pre-hook, which the direct call skips: the first step backpropagates through
# the weight computed when the hook was registered, the second raises "Trying to
# backward through the graph a second time". Calling the layer runs the hook.
import torch
import torch.nn as nn
from torch.nn.utils import weight_norm


def train(loader):
    layer = weight_norm(nn.Linear(4, 1))
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        loss = ((layer(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
