# GF305 positive whose module comes from the caller, annotated as an nn.Module
# (without the annotation its class is unknown and GF305 stays silent): the
# verifier cannot build it, so the change is untestable (a fixture for
# `evaluate` would make it testable); `apply` leaves it unless --allow-untestable.
import torch
import torch.nn as nn


def evaluate(model: nn.Module, loader):
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct
