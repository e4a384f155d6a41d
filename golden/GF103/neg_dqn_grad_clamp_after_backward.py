# GF103 negative: PyTorch DQN tutorial (older version). `param.grad.data.clamp_`
# writes through `.data`, but it clips gradients after backward and before the
# step; it does not run between the forward pass and backward.
import torch
import torch.nn as nn
import torch.nn.functional as F

policy_net = nn.Sequential(nn.Linear(4, 128), nn.ReLU(), nn.Linear(128, 2))
target_net = nn.Sequential(nn.Linear(4, 128), nn.ReLU(), nn.Linear(128, 2))
target_net.load_state_dict(policy_net.state_dict())
optimizer = torch.optim.RMSprop(policy_net.parameters())
GAMMA = 0.99


def optimize_model(state, action, reward, next_state):
    state_action_values = policy_net(state).gather(1, action)
    next_state_values = target_net(next_state).max(1)[0].detach()
    expected_state_action_values = (next_state_values * GAMMA) + reward
    loss = F.smooth_l1_loss(state_action_values, expected_state_action_values.unsqueeze(1))
    optimizer.zero_grad()
    loss.backward()
    for param in policy_net.parameters():
        param.grad.data.clamp_(-1, 1)
    optimizer.step()
