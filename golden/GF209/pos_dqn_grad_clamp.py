# GF209 positive: the DQN tutorial's gradient clamp without the underscore
# (pytorch/tutorials PR #30): `clamp` returns a clamped copy that is thrown
# away, so the gradients are never clipped.
import torch
import torch.nn as nn
import torch.nn.functional as F

policy_net = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 2))
optimizer = torch.optim.RMSprop(policy_net.parameters(), lr=1e-3)
memory = [(torch.randn(32, 4), torch.randint(0, 2, (32, 1)), torch.randn(32, 1)) for _ in range(100)]

for state_batch, action_batch, expected_values in memory:
    state_action_values = policy_net(state_batch).gather(1, action_batch)
    loss = F.smooth_l1_loss(state_action_values, expected_values)
    optimizer.zero_grad()
    loss.backward()
    for param in policy_net.parameters():
        param.grad.data.clamp(-1, 1)
    optimizer.step()
