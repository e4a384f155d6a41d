# GF213 positive: an adversarial perturbation clamped by rebinding its name; the
# clamped tensor is not the leaf, so delta.grad is None.
import torch


def attack(model, image, label, eps=0.03):
    delta = torch.zeros_like(image, requires_grad=True)
    delta = torch.clamp(delta, -eps, eps)
    loss = torch.nn.functional.cross_entropy(model(image + delta), label)
    loss.backward()
    return eps * delta.grad.sign()
