"""Healthy weight writes outside the optimizer: a clamp after step() (projected gradient descent), WGAN-style
clipping before the critic's forward, and a max-norm constraint applied at the top of forward."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class MaxNormLinear(nn.Linear):
    def forward(self, x):
        self.weight.data = torch.renorm(self.weight.data, p=2, dim=0, maxnorm=0.5)
        return super().forward(x)


critic = nn.Sequential(MaxNormLinear(6, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.RMSprop(critic.parameters(), lr=5e-3)
for step in range(6):
    for p in critic[2].parameters():
        p.data.clamp_(-0.05, 0.05)
    x = torch.randn(8, 6)
    opt.zero_grad()
    loss = -critic(x).mean() + critic(x * 0.5).mean()
    loss.backward()
    opt.step()
    with torch.no_grad():
        critic[0].bias.clamp_(-1.0, 1.0)
