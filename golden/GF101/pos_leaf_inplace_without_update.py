# GF101 positive, detect only: in-place writes into leaves that require grad, with grad mode on.
# A parameter built as a local, and a tensor made a leaf by `.requires_grad_()`: each op raises
# "a leaf Variable that requires grad is being used in an in-place operation". None of them is a
# gradient step (no `.grad` is read), so no rewrite is offered: whether the write belongs under
# no_grad, or before requires_grad is set, is for the author to say.
import torch
import torch.nn as nn


def build_scale(n):
    scale = nn.Parameter(torch.ones(n))
    scale.mul_(0.5)
    offset = torch.zeros(n).requires_grad_()
    offset[0] = 1.0
    return scale, offset


def restart_each_pass(x, passes):
    # rebound to a fresh leaf at the end of every pass: each pass's `+=` meets a leaf
    noise = torch.randn(3, requires_grad=True)
    for _ in range(passes):
        noise += x
        noise = torch.randn(3, requires_grad=True)
    return noise


def leaf_edited_before_backward():
    # torch.add / torch.mul hold nothing; the leaf `k` itself refuses the in-place op
    k = torch.tensor([3.0], requires_grad=True)
    u = torch.tensor([0.5], requires_grad=True)
    total = torch.add(k, u)
    out = torch.mul(total, torch.add(k, 2))
    k.mul_(2)
    out.backward()
