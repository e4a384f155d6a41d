# GF104 negative: a helper builds the TD target from the target network's output
# read through `.data`. The optimizer steps only the online network, so `.data`
# there is a deliberate stop-gradient on a network nothing trains here; the target
# network is synced by copying the online weights outside the loss.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

online = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
frozen = copy.deepcopy(online)
opt = torch.optim.Adam(online.parameters(), lr=1e-3)


def td_target(next_obs, reward, done, gamma=0.99):
    best_next = frozen(next_obs).data.max(dim=1, keepdim=True)[0]
    return reward + gamma * (1 - done) * best_next


def sync(src, dst, tau=0.05):
    for p_dst, p_src in zip(dst.parameters(), src.parameters()):
        p_dst.data.copy_(tau * p_src.data + (1 - tau) * p_dst.data)


for step in range(20):
    obs, act = torch.randn(8, 4), torch.randint(0, 2, (8, 1))
    reward, done, next_obs = torch.randn(8, 1), torch.zeros(8, 1), torch.randn(8, 4)
    q = online(obs).gather(1, act)
    loss = F.mse_loss(q, td_target(next_obs, reward, done))
    opt.zero_grad()
    loss.backward()
    opt.step()
    sync(online, frozen)
