# GF212 negative: DQN without a target network: the Q-network is called with
# gradients for the prediction and under no_grad for the bootstrap target.
import torch
import torch.nn as nn
import torch.nn.functional as F

q_net = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 2))
optimizer = torch.optim.Adam(q_net.parameters(), lr=1e-3)


def learn(batches, gamma=0.99):
    for s, a, r, s2, done in batches:
        q = q_net(s).gather(1, a.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            target = r + gamma * (1 - done) * q_net(s2).max(1).values
        loss = F.smooth_l1_loss(q, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
