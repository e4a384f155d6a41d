import torch
from torch.distributions import Normal


def act(mu, std, low=-1.0, high=1.0):
    dist = Normal(mu, std)
    action = dist.sample().clamp(low, high)
    logp = dist.log_prob(action).sum(-1)
    dist.entropy()
    return action, logp
