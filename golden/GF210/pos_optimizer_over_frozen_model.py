# GF210 positive: the whole model is frozen and the optimizer is built from its
# parameters; no parameter gets a gradient, so grad_norm is 0 and nothing
# trains (the second seed's checklist item on requires_grad).
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
model.requires_grad_(False)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = [(torch.randn(8, 32), torch.randint(0, 10, (8,))) for _ in range(10)]


def train():
    backbone = nn.Linear(16, 16)
    for p in backbone.parameters():
        p.requires_grad = False
    opt = torch.optim.SGD(backbone.parameters(), lr=0.1)
    return opt
