"""Source: https://github.com/PacktPublishing/Deep-Reinforcement-Learning-Hands-On-Second-Edition/blob/master/Chapter22/lib/i2a.py
Title: (held-out survey, bench/HELDOUT.md recall) environment model's skip connection
What went wrong: the environment model adds its first conv stage's output in place onto
the second stage's output; both stages are nn.Sequential attributes ending in nn.ReLU,
which keeps its output for backward.
runs: raises RuntimeError (modified by an inplace operation) in backward()
scope: extension
"""
import torch
import torch.nn as nn


class EnvModel(nn.Module):
    def __init__(self, planes=3, actions=4):
        super().__init__()
        self.actions = actions
        self.stage1 = nn.Sequential(nn.Conv2d(planes + actions, 16, 3, padding=1), nn.ReLU())
        self.stage2 = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.frame = nn.Conv2d(16, 1, 1)

    def forward(self, obs, act):
        planes = torch.zeros(obs.shape[0], self.actions, *obs.shape[2:])
        planes[range(obs.shape[0]), act] = 1.0
        h1 = self.stage1(torch.cat((obs, planes), dim=1))
        h2 = self.stage2(h1)
        h2 += h1  # expect: GF101
        return self.frame(h2)


if __name__ == "__main__":
    model = EnvModel()
    model(torch.randn(2, 3, 6, 6), torch.tensor([0, 3])).sum().backward()
