"""Source: https://github.com/OpenNMT/OpenNMT-py/blob/master/onmt/modules/sparse_activations.py
Title: (held-out survey, bench/HELDOUT.md recall) sparsemax autograd Function
What went wrong: the autograd.Function's forward and backward use the deprecated
torch.cuda.amp.custom_fwd / custom_bwd decorators (FutureWarning in torch 2.13).
runs: runs, with two FutureWarnings at class definition
scope: extension
"""
import torch
from torch.autograd import Function
from torch.cuda.amp import custom_bwd, custom_fwd


class ShrinkFunction(Function):
    @staticmethod
    @custom_fwd  # expect: GF301
    def forward(ctx, x, lam=0.5):
        ctx.save_for_backward(x)
        ctx.lam = lam
        return torch.sign(x) * (x.abs() - lam).clamp(min=0)

    @staticmethod
    @custom_bwd  # expect: GF301
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x.abs() > ctx.lam), None


if __name__ == "__main__":
    x = torch.randn(5, requires_grad=True)
    ShrinkFunction.apply(x).sum().backward()
