"""Source: https://github.com/VGraphRNN/VGRNN/issues/4
Title: Incorrect use of torch.nn.utils.clip_grad_norm
What went wrong: in both training scripts the gradient norm is clipped after `opt.step()`,
so the update never sees the clipped gradients.
runs: trains but clipping has no effect
scope: documented
"""
import torch
import torch.nn as nn

model = nn.GRU(16, 32)
head = nn.Linear(32, 16)
params = list(model.parameters()) + list(head.parameters())
optimizer = torch.optim.Adam(params, lr=1e-2)
clip = 10
seqs = [torch.randn(5, 3, 16) for _ in range(4)]

for epoch in range(3):
    for seq in seqs:
        optimizer.zero_grad()
        h, _ = model(seq)
        loss = ((head(h[:-1]) - seq[1:]) ** 2).mean()
        loss.backward()
        optimizer.step()
        nn.utils.clip_grad_norm_(params, clip)  # expect: GF206
