# GF307 negative: DQN. The target network is not optimized; its detached,
# no_grad output is a target on purpose.
import torch
import torch.nn as nn
import torch.nn.functional as F

policy_net = nn.Linear(4, 2)
target_net = nn.Linear(4, 2)
optimizer = torch.optim.RMSprop(policy_net.parameters(), lr=1e-3)
gamma = 0.99

for step in range(100):
    s, a, r, s2 = torch.randn(32, 4), torch.randint(0, 2, (32, 1)), torch.randn(32), torch.randn(32, 4)
    q = policy_net(s).gather(1, a).squeeze(1)
    with torch.no_grad():
        next_q = target_net(s2).max(1)[0]
    target = r + gamma * target_net(s2).max(1)[0].detach()
    loss = F.smooth_l1_loss(q, target) + F.mse_loss(q, r + gamma * next_q)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
