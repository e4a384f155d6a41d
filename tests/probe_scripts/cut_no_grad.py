"""A trainable branch is called under torch.no_grad() in the training step."""
import torch
import torch.nn as nn

a = nn.Linear(6, 6)
b = nn.Linear(6, 1)
opt = torch.optim.SGD(list(a.parameters()) + list(b.parameters()), lr=0.05)
for _ in range(5):
    x = torch.randn(4, 6)
    with torch.no_grad():
        za = a(x)
    loss = b(torch.tanh(za)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
