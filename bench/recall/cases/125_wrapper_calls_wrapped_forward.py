"""Source: https://github.com/numenta/nupic.torch/pull/51
Title: Forward hooks are ignored when calling the forward method
What went wrong: a wrapper module that applies a weight-sparsity mask runs the wrapped layer
through `self.module.forward(x)`, so forward hooks registered on the wrapped layer never run;
the fix calls `self.module(x)`.
runs: the hook registered on the wrapped Linear is never called
scope: documented
"""
import torch
import torch.nn as nn


class SparseWeights(nn.Module):
    def __init__(self, module, sparsity):
        super().__init__()
        self.module = module
        mask = (torch.rand_like(module.weight) > sparsity).float()
        self.register_buffer("mask", mask)

    def forward(self, x):
        with torch.no_grad():
            self.module.weight.mul_(self.mask)
        return self.module.forward(x)  # expect: GF305


if __name__ == "__main__":
    seen = []
    layer = SparseWeights(nn.Linear(16, 8), sparsity=0.5)
    layer.module.register_forward_hook(lambda m, inp, out: seen.append(out.shape))
    layer(torch.randn(2, 16))
    print(seen)
