# GF305 positive: a reinforcement-learning agent (a plain class) keeps its policy
# network, a module of this file, as an attribute and calls forward() on it.
# The agent's attribute is built only from `PolicyNet()`, so it is a module, and
# `self.policy(obs)` runs its hooks. The verifier builds `PolicyNet()` alone.
import torch
import torch.nn as nn


class PolicyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 16)
        self.head = nn.Linear(16, 2)

    def forward(self, obs):
        return self.head(torch.tanh(self.body(obs)))


class Agent:
    def __init__(self, lr=1e-3):
        self.policy = PolicyNet()
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=lr)

    def act(self, obs):
        logits = self.policy(obs)
        return torch.distributions.Categorical(logits=logits).sample()
