"""Inputs whose space nothing in the file shows: a model passed in by a caller we cannot see,
a model built from another package, and a value returned by a function of another module."""
import torch.nn.functional as F
from somewhere import build_encoder, posterior


def regulariser(model, x, prior):
    return F.kl_div(model(x), prior, reduction="batchmean")


def from_factory(x, prior):
    encoder = build_encoder()
    return F.kl_div(encoder(x), prior, reduction="batchmean")


def from_helper(x, prior):
    return F.kl_div(posterior(x), prior, reduction="batchmean")
