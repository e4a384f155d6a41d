# GF212 positive: the encoder is in the optimizer, but the training step runs it
# under torch.no_grad(): its parameters never get a gradient and never change.
import torch
import torch.nn as nn
import torch.nn.functional as F

enc = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 16))
head = nn.Linear(16, 4)
opt = torch.optim.Adam(list(enc.parameters()) + list(head.parameters()), lr=1e-3)


def train(loader):
    for x, y in loader:
        opt.zero_grad()
        with torch.no_grad():
            z = enc(x)
        loss = F.cross_entropy(head(z), y)
        loss.backward()
        opt.step()
