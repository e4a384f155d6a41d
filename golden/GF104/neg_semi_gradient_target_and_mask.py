# GF104 negative: `.data` as a deliberate stop-gradient inside a term that keeps
# its gradient: a semi-gradient TD target built from the online network, and a
# magnitude mask in a regulariser that still reads the weights with autograd.
import torch
import torch.nn as nn
import torch.nn.functional as F


def masked_l2(model, thresh=1e-3):
    total = 0.0
    for w in model.parameters():
        mask = (w.data.abs() > thresh).float()
        total = total + (w * mask).pow(2).sum()
    return total


def train(batches, gamma=0.99, lam=1e-4):
    qnet = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
    opt = torch.optim.Adam(qnet.parameters(), lr=1e-3)
    for s, a, r, s2, done in batches:
        q = qnet(s).gather(1, a)
        q_next = qnet(s2).data.max(1, keepdim=True)[0]
        loss = F.smooth_l1_loss(q, r + gamma * (1 - done) * q_next) + lam * masked_l2(qnet)
        opt.zero_grad()
        loss.backward()
        opt.step()
