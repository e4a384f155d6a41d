# GF209 negative: values unpacked from functions of the file, converted
# correctly or of a kind gradfix cannot show to be a tensor.
# - the pair from `make_batch` is converted and the results assigned;
# - `build` returns a module and a tensor: `net.to(device)` moves the module in
#   place, nothing is discarded;
# - `maybe_batch` may fall off its end (returns None), and `passthrough` returns
#   what it was given: neither element is known to be a tensor.
import torch
import torch.nn as nn


def make_batch(n, width=12):
    inputs = torch.rand(n, width)
    mask = inputs > 0.5
    return inputs, mask


def build(width):
    return nn.Linear(width, width), torch.zeros(width)


def maybe_batch(n, ok):
    if ok:
        return torch.rand(n, 12), torch.ones(n)


def passthrough(a, b):
    return a, b


device = "cuda" if torch.cuda.is_available() else "cpu"
inputs, mask = make_batch(8)
inputs = inputs.to(device)
mask = mask.float().to(device)
net, offset = build(12)
net.to(device)
offset = offset.to(device)
x, w = maybe_batch(8, True)
x.to(device)
p, q = passthrough(nn.Linear(2, 2), nn.ReLU())
p.to(device)
print((net(inputs) * mask + offset).sum(), w, q)
