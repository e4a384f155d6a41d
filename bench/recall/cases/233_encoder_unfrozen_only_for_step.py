"""Source: https://github.com/Lu-Feng/SuperVLAD/issues/1
Title: optimizer and crossimage_encoder update problem
What went wrong: the cross-image encoder is frozen (`requires_grad = False`) before its own
optimizer is built and is only switched to True around `optim_encoder.step()`, after
`loss.backward()` has already run; backward never computes gradients for it, so the optimizer
over it never updates anything.
runs: trains; the encoder's .grad stays None and its weights never change (the run prints both)
scope: extension
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(16, 8)
        self.encoder = nn.Linear(8, 8)

    def forward(self, x):
        return self.encoder(torch.relu(self.backbone(x)))


model = Model()
for p in model.encoder.parameters():
    p.requires_grad = False
optimizer = torch.optim.Adam(model.backbone.parameters(), lr=1e-3)
optim_encoder = torch.optim.Adam(model.encoder.parameters(), lr=1e-4)  # expect: GF210
before = model.encoder.weight.clone()
for it in range(3):
    out = nn.functional.normalize(model(torch.randn(6, 16)), dim=1)
    loss = (out @ out.t()).triu(1).mean()
    optimizer.zero_grad()
    optim_encoder.zero_grad()
    loss.backward()
    optimizer.step()
    for p in model.encoder.parameters():
        p.requires_grad = True
    optim_encoder.step()
    for p in model.encoder.parameters():
        p.requires_grad = False
print(model.encoder.weight.grad, torch.equal(before, model.encoder.weight))
