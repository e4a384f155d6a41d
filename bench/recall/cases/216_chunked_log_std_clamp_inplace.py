"""Source: https://github.com/toshikwa/gail-airl-ppo.pytorch/issues/13
Title: Questions about in-place operations
What went wrong: the Gaussian policy splits the network output into means and log-stds with
`.chunk(2, dim=-1)` and then clamps the log-stds in place (`log_stds.clamp_(-20, 2)`); the
chunks are views of one output and autograd refuses the in-place change (the reporter switched
to `clamp`).
runs: raises RuntimeError "Output 1 of Split is a view and is being modified inplace" at the clamp_ call, in the forward pass
scope: extension
"""
import torch
import torch.nn as nn


class StateDependentPolicy(nn.Module):
    def __init__(self, state_dim=6, action_dim=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(state_dim, 32), nn.Tanh(), nn.Linear(32, 2 * action_dim))

    def forward(self, states):
        means, log_stds = self.net(states).chunk(2, dim=-1)
        log_stds.clamp_(-20, 2)  # expect: GF101
        noise = torch.randn_like(means)
        actions = torch.tanh(means + noise * log_stds.exp())
        return actions, log_stds


policy = StateDependentPolicy()
actions, log_stds = policy(torch.randn(8, 6))
(actions.pow(2).mean() - log_stds.mean()).backward()
