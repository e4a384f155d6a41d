# GF213 positive: a hand-written descent step rebinds the slope under no_grad, so the
# name now holds a fresh tensor made with grad off: its .grad is None and the
# clearing on the next line raises AttributeError.
import torch

inputs = torch.linspace(-1.0, 1.0, 32)
targets = 3.0 * inputs + 0.5
slope = torch.zeros((), requires_grad=True)
step_size = 0.05
for it in range(20):
    residual = slope * inputs - targets
    cost = residual.pow(2).mean()
    cost.backward()
    with torch.no_grad():
        slope = slope - step_size * slope.grad
    slope.grad.zero_()
