import torch
import torch.nn as nn


class TwinQ(nn.Module):
    def __init__(self, obs=5, act=2):
        super().__init__()
        self.q1 = nn.Linear(obs + act, 1)
        self.q2 = nn.Linear(obs + act, 1)

    def forward(self, s, a):
        sa = torch.cat([s, a], dim=-1)
        return self.q1(sa), self.q2(sa)

    def q_min(self, s, a):
        q1, q2 = self(s, a)
        return torch.min(q1, q2)


critic = TwinQ()
critic_opt = torch.optim.Adam(critic.parameters(), lr=3e-4)
for step in range(5):
    s, a, target = torch.randn(16, 5), torch.randn(16, 2), torch.randn(16, 1)
    q1, q2 = critic(s, a)
    td = (q1 - target).pow(2).mean() + (q2 - target).pow(2).mean()
    # a conservative penalty: the data action's value is a cut baseline, and the method call on the trained
    # critic keeps the term's gradient path (the baseline decides where the clamp lets it through)
    baseline = torch.min(q1, q2).detach()
    gap = (critic.q_min(s, torch.randn(16, 2)) - baseline).clamp(min=0.0).mean()
    loss = td + 0.5 * gap
    critic_opt.zero_grad()
    loss.backward()
    critic_opt.step()
