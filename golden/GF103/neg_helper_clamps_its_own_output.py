"""A categorical-DQN loss helper clamps the probabilities it gathered, through `.data`.

`probs` is computed inside the helper from the network's output, not a weight: clamping it away
from 0 before the log is a deliberate straight-through guard (gather's backward does not read its
output). GF103 is about parameters written between the forward pass and backward().
"""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(4, 6), nn.Softmax(dim=1))
opt = torch.optim.Adam(net.parameters())


def compute_td_loss(batch):
    states = torch.randn(batch, 4)
    actions = torch.randint(0, 6, (batch, 1))
    target_probs = torch.rand(batch, 1)
    probs = net(states)
    probs = probs.gather(1, actions)
    probs.data.clamp_(0.01, 0.99)
    loss = -(target_probs * probs.log()).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


for _ in range(3):
    compute_td_loss(5)
