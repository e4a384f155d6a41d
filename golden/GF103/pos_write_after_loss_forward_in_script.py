# GF103 positive: straight-line code (a script or notebook cells) where the
# write does sit between the forward whose output becomes the loss and that
# loss's backward(): `.data` bypasses autograd, so the gradient is computed from
# a forward that used the old weights, and the optimizer then steps from the
# overwritten ones. Reported without a fix (the write is not a clamp).
import torch
import torch.nn as nn

layer = nn.Linear(3, 3)
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
inputs = torch.randn(4, 3)
opt.zero_grad()
output = layer(inputs)
layer.weight.data[...] = torch.eye(3)
objective = output.pow(2).sum()
objective.backward()
opt.step()
print(layer.weight)
