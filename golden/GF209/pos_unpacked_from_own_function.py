# GF209 positive: `make_batch` returns a pair of tensors on its only path, and
# the caller unpacks it and then writes the device moves as bare statements.
# `.to()` returns a new tensor, so both values stay on the CPU and the next
# lines use the unmoved ones (a device mismatch on a GPU).
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_batch(n, width=12):
    inputs = torch.rand(n, width)
    labels = torch.randint(0, 3, (n,))
    return inputs, labels


device = "cuda" if torch.cuda.is_available() else "cpu"
net = nn.Linear(12, 3).to(device)
inputs, labels = make_batch(8)
inputs.to(device)
labels.to(device)
loss = F.cross_entropy(net(inputs), labels)
loss.backward()
