"""Source: https://github.com/pytorch/pytorch/issues/12627
Title: using pytorch 0.4 using cuda show grad was None
What went wrong: `requires_grad` is switched on for the CPU input, and then the input is
moved to the GPU under the same name; the GPU tensor is a copy (not a leaf), so its `.grad`
stays None after backward. The answer: set requires_grad after moving it.
runs: on a CUDA machine prints None three times; on a CPU-only machine `.cuda()` raises
scope: extension (the flag is set by attribute, and the copy is made in a tuple assignment)
"""
import torch
from torch import nn, optim

inputs = torch.randn(3, 5)
targets = torch.tensor([1, 2, 3])
inputs.requires_grad = True

inputs, targets = inputs.cuda(), targets.cuda()  # expect: GF302

net = nn.Sequential(nn.Linear(5, 5), nn.LogSoftmax(dim=1)).cuda()
optimizer = optim.Adam(net.parameters(), lr=0.001)
loss_fn = nn.NLLLoss()
for i in range(3):
    optimizer.zero_grad()
    loss = loss_fn(net(inputs), targets)
    loss.backward()
    print(inputs.grad)
    optimizer.step()
