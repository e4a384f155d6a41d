"""A stack of coupling layers run by hand: each element of an nn.ModuleList / nn.Sequential (also
reversed, sliced, or a ModuleDict's values) is a module, so `layer.forward(...)` skips its hooks."""
import torch
import torch.nn as nn


class Coupling(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Linear(dim, dim)

    def forward(self, x):
        return x * torch.sigmoid(self.scale(x))


class Stack(nn.Module):
    def __init__(self, dim=6, depth=3):
        super().__init__()
        self.layers = nn.ModuleList([Coupling(dim) for _ in range(depth)])
        self.heads = nn.ModuleDict({"mean": nn.Linear(dim, 1), "spread": nn.Linear(dim, 1)})
        self.tail = nn.Sequential(Coupling(dim), Coupling(dim))

    def forward(self, x, backwards=False):
        order = self.layers
        if backwards:
            order = order[::-1]
        for layer in order:
            x = layer(x)
        for block in reversed(self.tail):
            x = block(x)
        outputs = []
        for head in self.heads.values():
            outputs.append(head(x))
        return outputs
