# GF302 positive: the perturbation is created as a leaf, then the name is rebound
# to its copy on the accelerator; `delta.grad` read after backward() is the copy's
# (always None). Detect only: the leaf may be held elsewhere.
import torch

dev = torch.device("cuda")
delta = torch.zeros(16, requires_grad=True)
delta = delta.to(dev)
target = torch.randn(16, device=dev)
((delta - target) ** 2).sum().backward()
step = 0.1 * delta.grad.sign()
