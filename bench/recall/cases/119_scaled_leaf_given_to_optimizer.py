"""Source: https://github.com/pytorch/pytorch/issues/140469
Title: ValueError: can't optimize a non-leaf Tensor
What went wrong: synthetic images for dataset distillation are created with
requires_grad=True and scaled by 0.01 in the same expression; the product is not a leaf, and
the optimizer built over it raises "can't optimize a non-leaf Tensor". The answer: create the
leaf first and keep the scaled value separately (or scale under no_grad).
runs: raises ValueError when the optimizer is built
scope: extension (the non-leaf comes from arithmetic, not a device or dtype copy)
"""
import torch

num_classes, ipc, channel, size = 10, 2, 3, 8
image_syn = torch.randn(num_classes * ipc, channel, size, size, requires_grad=True) * 0.01  # expect: GF302
optimizer_img = torch.optim.SGD([image_syn], lr=0.1, momentum=0.5)
for it in range(3):
    loss = image_syn.pow(2).mean()
    optimizer_img.zero_grad()
    loss.backward()
    optimizer_img.step()
