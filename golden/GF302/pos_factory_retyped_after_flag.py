# GF302 positive: weights asked to require grad at creation and then retyped. `.type()` to
# another dtype, `.type_as()` a float64 tensor and a CUDA-or-CPU tensor type (a copy on any
# machine with a GPU) each return a new tensor, so the names hold non-leaves: the optimizer
# refuses them, and the manual update finds no gradient.
import torch

Real = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
samples = torch.randn(40, 3, dtype=torch.float64)
labels = (samples.sum(dim=1) > 0).double()


def fit_with_optimizer():
    coef = torch.zeros(3, requires_grad=True).type(torch.DoubleTensor)
    shift = torch.zeros(1, requires_grad=True).type_as(samples)
    opt = torch.optim.SGD([coef, shift], lr=0.1)
    for _ in range(5):
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(samples @ coef + shift, labels)
        loss.backward()
        opt.step()
    return coef


def fit_by_hand(steps=5, lr=0.1):
    scale = torch.ones(3, requires_grad=True).type(Real)
    data = samples.float().type(Real)
    for _ in range(steps):
        loss = (data * scale).sum(dim=1).pow(2).mean()
        loss.backward()
        with torch.no_grad():
            scale -= lr * scale.grad
            scale.grad.zero_()
    return scale
