"""A policy network whose forward ends in a softmax, its output used as kl_div's input for a
trust-region style penalty against the old policy's probabilities."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Policy(nn.Module):
    def __init__(self, obs=4, actions=2):
        super().__init__()
        self.fc = nn.Linear(obs, actions)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=-1)


def penalty(policy, old_probs, states):
    return F.kl_div(policy(states), old_probs, reduction="batchmean")


def main():
    policy = Policy()
    states = torch.randn(6, 4)
    with torch.no_grad():
        old = policy(states)
    penalty(policy, old, states).backward()
