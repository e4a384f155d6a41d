# GF212 positive: a contrastive setup whose projector is optimized together with
# the backbone but is only ever called under torch.inference_mode().
import torch
import torch.nn as nn
import torch.nn.functional as F

backbone = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 128))
projector = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 32))
optimizer = torch.optim.AdamW([*backbone.parameters(), *projector.parameters()], lr=3e-4)


def step(x1, x2, tau=0.1):
    h1, h2 = backbone(x1), backbone(x2)
    with torch.inference_mode():
        z1, z2 = projector(h1), projector(h2)
    logits = F.normalize(h1, dim=1) @ F.normalize(h2, dim=1).T / tau
    loss = F.cross_entropy(logits, torch.arange(len(x1)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return z1, z2
