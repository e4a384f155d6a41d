# GF209 positive in a helper: the common `clip_gradient(optimizer, grad_clip)`
# helper with `clamp` instead of `clamp_`. The loop calls it between backward
# and step with grad_clip=5.0; the verifier renders the op there with that bound.
import torch
import torch.nn as nn
import torch.nn.functional as F


def clip_gradient(optimizer, grad_clip):
    for group in optimizer.param_groups:
        for param in group["params"]:
            if param.grad is not None:
                param.grad.data.clamp_(-grad_clip, grad_clip)


model = nn.Linear(16, 4)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(100)]

for x, y in loader:
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    clip_gradient(optimizer, 5.0)
    optimizer.step()
