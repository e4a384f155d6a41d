"""Source: https://github.com/pytorch/tutorials/pull/30
Title: Fixed clamp not being applied to parameters
What went wrong: the DQN tutorial clipped gradients with `param.grad.data.clamp(-1, 1)`, whose
result is thrown away; the in-place `clamp_` was intended.
runs: trains but gradients are never clipped
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

policy_net = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 2))
optimizer = torch.optim.RMSprop(policy_net.parameters())


def optimize_model(state_batch, action_batch, expected_state_action_values):
    state_action_values = policy_net(state_batch).gather(1, action_batch)
    loss = F.smooth_l1_loss(state_action_values, expected_state_action_values)
    optimizer.zero_grad()
    loss.backward()
    for param in policy_net.parameters():
        param.grad.data.clamp(-1, 1)  # expect: GF209
    optimizer.step()


optimize_model(torch.randn(8, 4), torch.randint(0, 2, (8, 1)), torch.randn(8, 1))
