# GF103 negative: WGAN weight clipping through `.data`, done right after the
# critic's optimizer step. Nothing sits between a forward pass and its
# backward, so the clamp is already in the projected-gradient position.
import torch
import torch.nn as nn

netG = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 784), nn.Tanh())
netD = nn.Sequential(nn.Linear(784, 256), nn.LeakyReLU(0.2), nn.Linear(256, 1))
optD = torch.optim.RMSprop(netD.parameters(), lr=5e-5)
optG = torch.optim.RMSprop(netG.parameters(), lr=5e-5)
n_critic, clip = 5, 0.01

for it in range(1000):
    for _ in range(n_critic):
        real = torch.rand(64, 784) * 2 - 1
        fake = netG(torch.randn(64, 64)).detach()
        lossD = -(netD(real).mean() - netD(fake).mean())
        optD.zero_grad()
        lossD.backward()
        optD.step()
        for p in netD.parameters():
            p.data.clamp_(-clip, clip)
    lossG = -netD(netG(torch.randn(64, 64))).mean()
    optG.zero_grad()
    lossG.backward()
    optG.step()
