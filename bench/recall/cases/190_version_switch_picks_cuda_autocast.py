"""Source: https://github.com/WenjieDu/PyPOTS/issues/520
Title: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated since torch 2.4
What went wrong: a compatibility wrapper meant to use the new API on torch 2.4 and later has its
branches swapped: on new versions it imports and calls `torch.cuda.amp.autocast`, the deprecated
one, and the warning appears on every forward (the maintainer notes the conditions should be exchanged).
runs: on torch 2.13 takes the first branch and emits FutureWarning "`torch.cuda.amp.autocast(args...)` is deprecated"
scope: documented
"""
import torch
import torch.nn as nn


def autocast(**kwargs):
    if torch.__version__ >= "2.4":
        from torch.cuda.amp import autocast

        return autocast(**kwargs)  # expect: GF301
    else:
        from torch.amp import autocast

        return autocast("cuda", **kwargs)


class LocalAttention(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.qk = nn.Linear(dim, dim)

    def forward(self, x):
        with autocast(enabled=False):
            q = self.qk(x.float())
            return torch.softmax(q @ x.transpose(-1, -2), dim=-1) @ x


print(LocalAttention()(torch.randn(2, 4, 8)).shape)
