# GF213 negative: the descent step rebinds under no_grad, but the new tensor is made a
# leaf again with requires_grad_() and its .grad is only read after the next backward;
# the other loop only tests .grad against None before clearing it.
import torch

inputs = torch.linspace(-1.0, 1.0, 32)
targets = 3.0 * inputs + 0.5


def fit_releafed(steps=20, step_size=0.05):
    slope = torch.zeros((), requires_grad=True)
    for it in range(steps):
        cost = (slope * inputs - targets).pow(2).mean()
        cost.backward()
        print(slope.grad.item())
        with torch.no_grad():
            slope = slope - step_size * slope.grad
        slope.requires_grad_()
    return slope


def fit_guarded(steps=20, step_size=0.05):
    slope = torch.zeros((), requires_grad=True)
    for it in range(steps):
        cost = (slope * inputs - targets).pow(2).mean()
        cost.backward()
        with torch.no_grad():
            slope = slope - step_size * slope.grad
        if slope.grad is not None:
            slope.grad.zero_()
        slope.requires_grad_()
    return slope
