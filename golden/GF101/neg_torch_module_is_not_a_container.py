# GF101 negative: `torch.add(...)` / `torch.mul(...)` are functions of the torch module
# that return new tensors; the module is never a container holding the tensors passed
# to them. The hand-written SGD step after backward() changes only the leaves. (A leaf changed
# in place with grad on is GF101's leaf case: pos_leaf_inplace_without_update.py.)
import torch

step_size = 0.1
inputs = torch.rand(32, 1) * 4
labels = 3 * inputs + 1 + torch.randn(32, 1) * 0.1
slope = torch.randn(1, requires_grad=True)
offset = torch.zeros(1, requires_grad=True)

for epoch in range(200):
    scaled = torch.mul(slope, inputs)
    guess = torch.add(scaled, offset)
    loss = ((guess - labels) ** 2).mean()
    loss.backward()
    offset.data.sub_(step_size * offset.grad)
    slope.data.sub_(step_size * slope.grad)
    slope.grad.zero_()
    offset.grad.zero_()

