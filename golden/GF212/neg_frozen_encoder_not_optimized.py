# GF212 negative: the frozen encoder is left out of the optimizer, which says it
# stays frozen.
import torch
import torch.nn as nn
import torch.nn.functional as F

enc = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 16))
head = nn.Linear(16, 4)
opt = torch.optim.Adam(head.parameters(), lr=1e-3)


def train(loader):
    for x, y in loader:
        opt.zero_grad()
        with torch.no_grad():
            z = enc(x)
        loss = F.cross_entropy(head(z), y)
        loss.backward()
        opt.step()
