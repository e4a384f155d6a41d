# GF302 negative: copies that are never asked to be leaves. An initial hidden
# state moved after creation and only fed forward, a list of such states, and a
# name rebound to a copy and then given `.requires_grad_()` again.
import torch
import torch.nn as nn

dev = torch.device("cuda")
rnn = nn.GRU(8, 8).to(dev)
h0 = torch.zeros(1, 2, 8, requires_grad=True)
h0 = h0.to(dev)
out, _ = rnn(torch.randn(5, 2, 8, device=dev), h0)
states = [torch.zeros(2, 8, requires_grad=True).to(dev) for _ in range(3)]
total = sum(s.sum() for s in states)
w = torch.randn(8, requires_grad=True)
w = w.to(dev).detach().requires_grad_()
opt = torch.optim.Adam([w], lr=1e-2)
