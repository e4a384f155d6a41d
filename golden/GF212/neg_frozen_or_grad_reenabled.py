# GF212 negative: an encoder frozen with requires_grad_(False) but kept in the
# optimizer (to unfreeze it later), and an encoder called under enable_grad()
# nested in a no_grad block, which turns gradients back on.
import torch
import torch.nn as nn
import torch.nn.functional as F


def train_frozen(loader):
    enc = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
    head = nn.Linear(32, 2)
    enc.requires_grad_(False)
    opt = torch.optim.Adam(list(enc.parameters()) + list(head.parameters()), lr=1e-3)
    for x, y in loader:
        with torch.no_grad():
            z = enc(x)
        loss = F.cross_entropy(head(z), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


def train_nested(loader):
    enc = nn.Linear(8, 8)
    head = nn.Linear(8, 2)
    opt = torch.optim.Adam(list(enc.parameters()) + list(head.parameters()))
    for x, y in loader:
        with torch.no_grad():
            x = (x - x.mean()) / (x.std() + 1e-6)
            with torch.enable_grad():
                z = enc(x)
        loss = F.cross_entropy(head(z), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
