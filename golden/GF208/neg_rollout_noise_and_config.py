# GF208 negative: a TD3-style script adds exploration noise to the actor's action
# during the rollout (under no_grad). The loss reads `actor` and `args`, but
# neither is a term of it, and `actions` is not a loss.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--noise", type=float, default=0.1)
args = parser.parse_args([])
actor = nn.Sequential(nn.Linear(3, 1), nn.Tanh())
critic = nn.Linear(4, 1)
actor_opt = torch.optim.Adam(actor.parameters(), lr=3e-4)

obs = torch.randn(1, 3)
for step in range(100):
    with torch.no_grad():
        actions = actor(obs)
        actions += torch.normal(0.0, args.noise * torch.ones_like(actions))
    batch = torch.randn(32, 3)
    actor_loss = -critic(torch.cat([batch, actor(batch)], 1)).mean() * args.noise
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
