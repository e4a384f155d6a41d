# GF303 positive outside a module: `w` holds a plain non-leaf copy, so
# `w.grad` stays None and the optimizer raises "can't optimize a non-leaf Tensor".
import torch
import torch.nn as nn

DEVICE = "cuda"
w = nn.Parameter(torch.randn(3, 3)).to(DEVICE)
optimizer = torch.optim.Adam([w], lr=1e-3)
