"""Source: https://github.com/ikostrikov/pytorch-ddpg-naf/issues/1
Title: AttributeError for gradient clipping
What went wrong: the NAF agent's update clips gradients with `param.grad.data.clamp(-1, 1)` as a
bare statement; `clamp` returns a new tensor that is thrown away, so no gradient is clipped (and
the loop also fails on parameters without a gradient); the reporter replaces it with
`clip_grad_norm`.
runs: trains; the largest gradient entry is still above 1 after the "clip" (the run prints it)
scope: documented
"""
import torch
import torch.nn as nn


class NAF:
    def __init__(self, obs_dim=3, act_dim=1):
        self.model = nn.Sequential(nn.Linear(obs_dim + act_dim, 64), nn.Tanh(), nn.Linear(64, 1))
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def update_parameters(self, state, action, target):
        q = self.model(torch.cat([state, action], dim=1))
        loss = nn.functional.mse_loss(q, target)
        self.optimizer.zero_grad()
        loss.backward()
        for param in self.model.parameters():
            param.grad.data.clamp(-1, 1)  # expect: GF209
        largest = max(p.grad.abs().max().item() for p in self.model.parameters())
        self.optimizer.step()
        return loss.item(), largest


agent = NAF()
batch = (torch.randn(32, 3), torch.randn(32, 1), 50 * torch.randn(32, 1))
print(agent.update_parameters(*batch))
