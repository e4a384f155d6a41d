# GF302 positive: the flag is switched on by attribute for the CPU batch, then the
# batch and its labels are moved together in one tuple assignment; the name now
# holds the device copy, whose `.grad` (read for a saliency map) stays None.
import torch
import torch.nn as nn

device = torch.device("cuda")
images = torch.rand(4, 8)
labels = torch.randint(0, 3, (4,))
images.requires_grad = True
images, labels = images.to(device), labels.to(device)
net = nn.Linear(8, 3).to(device)
nn.functional.cross_entropy(net(images), labels).backward()
saliency = images.grad.abs()
