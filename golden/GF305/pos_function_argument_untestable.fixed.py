# GF305 positive whose module comes from the caller: the verifier cannot build
# it, so the change is untestable (a fixture for `evaluate` would make it
# testable); `apply` leaves it unless --allow-untestable.
import torch


def evaluate(model, loader):
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct
