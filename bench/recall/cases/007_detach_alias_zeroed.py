"""Source: https://github.com/pytorch/pytorch/issues/6990
Title: Differences between .data and .detach
What went wrong: a detached handle on a sigmoid output is zeroed in place; it shares storage
with the output sigmoid saved, so backward refuses to run.
runs: raises RuntimeError (modified by an inplace operation) in backward()
scope: documented
"""
import torch

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
out = a.sigmoid()
c = out.detach()  # expect: GF102
c.zero_()
out.sum().backward()
