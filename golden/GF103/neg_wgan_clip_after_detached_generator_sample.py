# GF103 negative: the critic's weights are clipped at the top of each critic update,
# after a detached generator sample is drawn but before the critic scores anything. The
# critic's forward then runs on the clipped weights, so the graph backward() reads was
# built from them; the generator call before the clip does not touch the critic.
import torch
import torch.nn as nn

gen = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
opt_c = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
opt_g = torch.optim.RMSprop(gen.parameters(), lr=5e-5)
bound = 0.01


def noise(n):
    return torch.randn(n, 3)


for it in range(4):
    real = torch.randn(8, 2)
    opt_c.zero_grad()
    fake = gen(noise(8)).detach()
    for w in critic.parameters():
        w.data.clamp_(-bound, bound)
    c_loss = critic(fake).mean() - critic(real).mean()
    c_loss.backward()
    opt_c.step()

    opt_g.zero_grad()
    g_loss = -critic(gen(noise(8))).mean()
    g_loss.backward()
    opt_g.step()
