# GF305 negative: `ctx.scorer.forward(x)` on an object passed in. One caller sets
# `scorer` to a module only after the call, another to what a loader of unknown type
# returns, and `score_unused` has no caller at all: nothing shows the receiver is an
# nn.Module when forward() runs, so `ctx.scorer(x)` might raise TypeError.
import torch
import torch.nn as nn


class Context:
    scorer = None


def score(ctx, x):
    return ctx.scorer.forward(x)


def score_unused(ctx, x):
    return ctx.scorer.forward(x)


def load_scorer(path):
    return torch.load(path)


def first(x):
    ctx = Context()
    ctx.scorer = load_scorer("scorer.pt")
    return score(ctx, x)


def second(x):
    ctx = Context()
    out = score(ctx, x)
    ctx.scorer = nn.Linear(4, 1)
    return out
