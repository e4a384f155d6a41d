"""Source: https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583
Title: When inplace operation are allowed and when not
What went wrong: one element of the output of `exp()` (which autograd keeps for its own
backward) is overwritten with an index assignment after the loss was built.
runs: raises RuntimeError (modified by an inplace operation) in backward()
scope: extension (plain subscript assignment, not an augmented assignment)
"""
import torch

t = torch.arange(3.0, requires_grad=True)
u = 2 * t
u_exp = u.exp()
loss = u_exp.sum()
u[0] = 5.0
loss.backward(retain_graph=True)
u_exp[0] = 5.0  # expect: GF101
loss.backward()
