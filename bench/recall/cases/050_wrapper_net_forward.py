"""Source: https://github.com/IgorSusmelj/pytorch-styleguide/issues/3
Title: Don't use plain forward in python
What went wrong: the style guide presented `output = self.net.forward(input)` as equivalent to
`self.net(input)`; code written that way on a network held by another object skips hooks.
runs: trains but hooks on the held network never run
scope: documented
"""
import torch
import torch.nn as nn


class Agent:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 2))
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-3)

    def update(self, states, targets):
        output = self.net.forward(states)  # expect: GF305
        loss = nn.functional.mse_loss(output, targets)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


agent = Agent()
agent.update(torch.randn(32, 4), torch.randn(32, 2))
