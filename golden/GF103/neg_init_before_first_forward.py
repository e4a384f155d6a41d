"""A tutorial script that sets a fresh layer's weights through `.data` before using it.

The script (as a notebook's cells often do) ran a forward and a backward on another layer
earlier; `edge.weight.data = ...` comes before `edge` is ever called, so no graph holds the old
values: it is an initialisation, not a write between a forward and its backward.
"""
import torch
import torch.nn as nn

probe = nn.Linear(4, 2)
probe(torch.randn(3, 4)).sum().backward()

kernel = torch.full((1, 1, 3, 3), -1.0 / 9)
kernel[0, 0, 1, 1] = 1.0
edge = nn.Conv2d(1, 1, 3, bias=False)
edge.weight.data = kernel
opt = torch.optim.SGD(edge.parameters(), lr=0.1)
picture = torch.randn(1, 1, 8, 8)
sharp = edge(picture)
opt.zero_grad()
sharp.mean().backward()
opt.step()
