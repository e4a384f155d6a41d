"""Source: https://github.com/asyml/texar-pytorch/issues/72
Title: Missing trainable variables from MergeLayer
What went wrong: MergeLayer keeps the sub-layers it is given in a Python list, so their
parameters are invisible to `parameters()` and never trained (fix: nn.ModuleList).
runs: trains but the merged sub-layers are not optimised
scope: extension (list filled from modules passed to the constructor)
"""
import torch
import torch.nn as nn


class MergeLayer(nn.Module):
    def __init__(self, layers, mode="concat"):
        super().__init__()
        self._mode = mode
        self._layers = []  # expect: GF304
        for layer in layers:
            self._layers.append(layer)

    def forward(self, x):
        outs = [layer(x) for layer in self._layers]
        return torch.cat(outs, dim=-1) if self._mode == "concat" else sum(outs)


merge = MergeLayer([nn.Linear(8, 4), nn.Linear(8, 4)])
print(len(list(merge.parameters())))
