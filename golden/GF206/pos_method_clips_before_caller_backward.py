# GF206 positive: the policy's loss method clips its own gradients while it builds the loss,
# but the loop calls it right after clearing the gradients and runs backward() only when it
# returns: the clip sees the cleared gradients, and the step uses unclipped ones.
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 2))
        self.max_grad = 0.5

    def forward(self, obs):
        return self.body(obs)

    def compute_loss(self, obs, returns):
        loss = (self(obs).sum(dim=1) - returns).pow(2).mean()
        nn.utils.clip_grad_norm_(self.parameters(), self.max_grad)
        return loss


policy = Policy()
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
for update in range(4):
    obs, returns = torch.randn(10, 6), torch.randn(10)
    opt.zero_grad()
    loss = policy.compute_loss(obs, returns)
    loss.backward()
    opt.step()
