"""Source: https://github.com/pytorch/pytorch/issues/1291
Title: `list(model.Parameters())` behaves differently for custom `nn.module`
What went wrong: the network creates its `nn.Linear` layers inside `forward` instead of in
`__init__`, so the model has no registered parameters at all; each call builds fresh random
layers that no optimizer ever sees.
runs: `list(model.parameters())` is empty; two calls on the same input give different outputs
scope: extension (modules constructed in forward, not kept in a container)
"""
import torch
import torch.nn as nn

D_in, H, D_out = 20, 16, 3


class ThreeLayerNet(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        h = torch.nn.Linear(D_in, H)(x).clamp(min=0)  # expect: GF304
        h = torch.nn.Linear(H, H)(h).clamp(min=0)
        return torch.nn.Linear(H, D_out)(h)


if __name__ == "__main__":
    net = ThreeLayerNet()
    x = torch.randn(2, D_in)
    print(len(list(net.parameters())), torch.allclose(net(x), net(x)))
