"""Source: https://github.com/pytorch/pytorch/issues/20089
Title: [Undesirable behaviour] Allocating a nn.Parameter on gpu inside a nn.Module makes it not to be enlisted as network parameter
What went wrong: the module's `__init__` writes `self.<name> = nn.Parameter(...).cuda()`; the `.cuda()`
copy is a plain tensor, so the attribute is not registered: `parameters()` is empty, and
the optimizer would never update it.
runs: on a CUDA machine `list(layer.parameters())` is empty and `layer.scale` has a copy node as grad_fn (the report shows CopyBackwards; not run here: no CUDA machine); without CUDA the file only prints that it needs one
scope: documented
"""
import torch
import torch.nn as nn


class ScaleLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.full((8,), 0.5)).cuda()  # expect: GF303

    def forward(self, x):
        return x * self.scale


if torch.cuda.is_available():
    layer = ScaleLayer()
    print(list(layer.parameters()), layer.scale.grad_fn)
else:
    print("needs CUDA: nn.Parameter(...).cuda() cannot run on a CPU-only build")
