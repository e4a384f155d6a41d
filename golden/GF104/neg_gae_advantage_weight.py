"""Generalised advantage estimation in an A3C update: the value estimates are read through `.data` so that the
advantage weights the log-probabilities as a constant. The policy term keeps its gradient through the
log-probabilities; dropping `.data` would also train the value head through the policy loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(6, 32)
        self.policy = nn.Linear(32, 3)
        self.value = nn.Linear(32, 1)

    def forward(self, obs):
        h = F.relu(self.trunk(obs))
        return self.value(h), self.policy(h)


class Rollout:
    def __init__(self):
        self.values, self.log_probs, self.rewards = [], [], []


def update(agent, optimizer, rollout, gamma=0.99, tau=0.95):
    policy_loss = 0
    value_loss = 0
    gae = torch.zeros(1, 1)
    ret = rollout.values[-1].detach()
    for i in reversed(range(len(rollout.rewards))):
        ret = gamma * ret + rollout.rewards[i]
        value_loss = value_loss + 0.5 * (ret - rollout.values[i]).pow(2)
        td_error = rollout.rewards[i] + gamma * rollout.values[i + 1].data - rollout.values[i].data
        gae = gae * gamma * tau + td_error
        policy_loss = policy_loss - rollout.log_probs[i] * gae
    optimizer.zero_grad()
    (policy_loss + 0.5 * value_loss).backward()
    optimizer.step()


def collect_and_train(steps=8):
    agent = Agent()
    optimizer = torch.optim.Adam(agent.parameters(), lr=1e-3)
    for _ in range(steps):
        rollout = Rollout()
        for _t in range(5):
            value, logits = agent(torch.randn(1, 6))
            rollout.values.append(value)
            rollout.log_probs.append(F.log_softmax(logits, dim=1)[0, 1])
            rollout.rewards.append(1.0)
        rollout.values.append(torch.zeros(1, 1))
        update(agent, optimizer, rollout)
