# GF101 negative: `torch.add(...)` / `torch.mul(...)` are functions of the torch module
# that return new tensors; the module is never a container holding the tensors passed
# to them. The hand-written SGD step after backward() changes only the leaves.
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


def leaf_edited_before_backward():
    # a leaf that requires grad changed in place raises its own error ("a leaf Variable
    # that requires grad is being used in an in-place operation"); no container shares it
    k = torch.tensor([3.0], requires_grad=True)
    u = torch.tensor([0.5], requires_grad=True)
    total = torch.add(k, u)
    out = torch.mul(total, torch.add(k, 2))
    k.mul_(2)
    out.backward()
