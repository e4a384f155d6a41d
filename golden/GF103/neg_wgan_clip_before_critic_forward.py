# GF103 negative: original WGAN ordering. The critic's weights are clipped
# through `.data` at the top of each critic iteration, before its forward
# pass, so backward sees the weights the forward actually used.
import torch
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self, dim=784):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 512), nn.LeakyReLU(0.2), nn.Linear(512, 1))

    def forward(self, x):
        return self.net(x).view(-1)


gen = nn.Sequential(nn.Linear(100, 784), nn.Tanh())
critic = Critic()
opt_c = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
opt_g = torch.optim.RMSprop(gen.parameters(), lr=5e-5)

for gen_iter in range(500):
    for _ in range(5):
        for p in critic.parameters():
            p.data.clamp_(-0.01, 0.01)
        real = torch.rand(64, 784) * 2 - 1
        fake = gen(torch.randn(64, 100))
        loss_c = critic(fake.detach()).mean() - critic(real).mean()
        opt_c.zero_grad()
        loss_c.backward()
        opt_c.step()
    loss_g = -critic(gen(torch.randn(64, 100))).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
