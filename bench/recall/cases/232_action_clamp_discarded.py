"""Source: https://github.com/xtma/simple-pytorch-rl/issues/2
Title: Clamp actions does not do anything
What went wrong: the Pendulum agent samples an action from its Gaussian policy and writes
`action.clamp(-2.0, 2.0)` as a statement of its own; clamp is out of place, the result is thrown
away, and the unclamped action goes to the environment.
runs: runs; actions outside [-2, 2] reach the environment (the run prints the largest |action|)
scope: documented
"""
import torch
import torch.nn as nn
from torch.distributions import Normal


class GaussianActor(nn.Module):
    def __init__(self, obs_dim=3):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, 2))

    def forward(self, s):
        mean, raw_std = self.trunk(s).unbind(-1)
        return 2.0 * torch.tanh(mean), nn.functional.softplus(raw_std) + 1.0


anet = GaussianActor()


def select_action(state):
    with torch.no_grad():
        mu, sigma = anet(state)
    dist = Normal(mu, sigma)
    action = dist.sample()
    action.clamp(-2.0, 2.0)  # expect: GF209
    return action, dist.log_prob(action)


actions = torch.cat([select_action(torch.randn(1, 3))[0] for _ in range(50)])
print("max |action|:", actions.abs().max().item())
