# GF101 positive: a multi-scale gate keeps one sigmoid gate per scale in a list built by a
# comprehension over its ModuleList, then folds each gate into the next in place. Every
# element is a sigmoid's output, which autograd saved for backward, so both the `*=` and the
# `.add_()` on an element make backward() raise "modified by an inplace operation".
import torch
import torch.nn as nn
import torch.nn.functional as F


class ScaleGates(nn.Module):
    def __init__(self, width=12, scales=3):
        super().__init__()
        self.gate_layers = nn.ModuleList([nn.Linear(width, width) for _ in range(scales)])
        self.branches = nn.ModuleList(nn.Linear(width, width) for _ in range(2))

    def forward(self, h):
        gates = [torch.sigmoid(layer(h)) for layer in self.gate_layers]
        for k in range(1, len(gates)):
            gates[k] *= gates[k - 1]
        outs = [F.relu(branch(h)) for branch in self.branches]
        outs[0].add_(outs[1])
        return gates[-1] * outs[0]


if __name__ == "__main__":
    ScaleGates()(torch.randn(4, 12)).sum().backward()
