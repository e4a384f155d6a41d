# GF305 positive: a DQN agent (a plain class) builds its online and target
# networks in one tuple assignment and calls forward() on both. Element by
# element, each attribute is a `QNet()`, so each receiver is a module and
# `self.online(s)` / `self.target(s2)` would run its hooks.
import torch
import torch.nn as nn


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 32)
        self.out = nn.Linear(32, 2)

    def forward(self, s):
        return self.out(torch.relu(self.fc(s)))


class DQNAgent:
    def __init__(self, gamma=0.99):
        self.online, self.target = QNet(), QNet()
        self.gamma = gamma
        self.opt = torch.optim.Adam(self.online.parameters(), lr=1e-3)

    def td_loss(self, s, a, r, s2):
        q = self.online.forward(s).gather(1, a)
        with torch.no_grad():
            q_next = self.target.forward(s2).max(1, keepdim=True).values
        return nn.functional.mse_loss(q, r + self.gamma * q_next)
