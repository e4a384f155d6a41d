# GF307 positive: the activity penalty is computed from a detached copy, so the
# term only changes the logged loss; its gradient is zero.
import torch
import torch.nn as nn
import torch.nn.functional as F


def train(model, loader, lam=1e-3):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for x, y in loader:
        logits = model(x)
        penalty = logits.detach().abs().mean()
        loss = F.cross_entropy(logits, y) + lam * penalty
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
