"""Source: https://github.com/PTB-MR/mrpro/pull/965
Title: Avoid forward calls in our own code
What went wrong: the library's composite operators evaluate their parts with `.forward(...)`
instead of calling them, so profiling and any hooks on the inner operators are bypassed; the
PR replaces those calls with `__call__`.
runs: the forward hook registered on the inner operator never fires
scope: documented
"""
import torch
import torch.nn as nn


class ScaleOp(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = nn.Parameter(torch.tensor(float(factor)))

    def forward(self, x):
        return (x * self.factor,)


class OperatorComposition(nn.Module):
    def __init__(self, op1: nn.Module, op2: nn.Module):
        super().__init__()
        self._op1 = op1
        self._op2 = op2

    def forward(self, x):
        return self._op1.forward(*self._op2.forward(x))  # expect: GF305


if __name__ == "__main__":
    inner = ScaleOp(2.0)
    seen = []
    inner.register_forward_hook(lambda m, i, o: seen.append(True))
    chain = OperatorComposition(ScaleOp(3.0), inner)
    print(chain(torch.ones(3)), "hooks:", len(seen))
