# GF210 negative: every backbone parameter is frozen, then the last layer of the
# classifier Sequential is replaced by indexing into it; the new layer trains, so the
# optimizer over all parameters has something to train.
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.Sequential(nn.Linear(10, 8), nn.ReLU(), nn.Linear(8, 4)))
for p in net.parameters():
    p.requires_grad = False
net[2][2] = nn.Linear(8, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
