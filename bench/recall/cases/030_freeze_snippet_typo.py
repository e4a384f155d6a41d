"""Source: https://github.com/SvenBecker/vscode-pytorch/issues/8
Title: 'freeze' syntax is incorrect and PyTorch won't tell you
What went wrong: the editor snippet for freezing a model writes `require_grad` (no s), so a
user freezing a backbone before replacing the head keeps every parameter trainable.
runs: trains but the backbone is not frozen
scope: documented
"""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10))
for param in model.parameters():
    param.require_grad = False  # expect: GF210
model[2] = nn.Linear(32, 3)

optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(8, 32), torch.randint(0, 3, (8,))
for _ in range(3):
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
