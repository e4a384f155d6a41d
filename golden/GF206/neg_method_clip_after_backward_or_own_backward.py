# GF206 negative next to the method-clip positive: one method clips and is called between
# backward() and the step (the right place); another runs its own backward() before its
# clip; and a third clips only to read the norm (max norm infinite).
import math

import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 2)

    def forward(self, obs):
        return self.body(obs)

    def clip(self):
        return nn.utils.clip_grad_norm_(self.parameters(), 0.5)

    def backward_and_clip(self, obs, returns):
        loss = (self(obs).sum(dim=1) - returns).pow(2).mean()
        loss.backward()
        nn.utils.clip_grad_norm_(self.parameters(), 0.5)
        return loss.detach()

    def loss_and_norm(self, obs, returns):
        norm = nn.utils.clip_grad_norm_(self.parameters(), math.inf)
        return (self(obs).sum(dim=1) - returns).pow(2).mean(), norm


policy = Policy()
opt = torch.optim.SGD(policy.parameters(), lr=0.01)
for update in range(3):
    obs, returns = torch.randn(10, 6), torch.randn(10)
    opt.zero_grad()
    loss = (policy(obs).sum(dim=1) - returns).pow(2).mean()
    loss.backward()
    policy.clip()
    opt.step()
for update in range(3):
    obs, returns = torch.randn(10, 6), torch.randn(10)
    opt.zero_grad()
    policy.backward_and_clip(obs, returns)
    opt.step()
for update in range(3):
    obs, returns = torch.randn(10, 6), torch.randn(10)
    opt.zero_grad()
    loss, norm = policy.loss_and_norm(obs, returns)
    loss.backward()
    opt.step()
