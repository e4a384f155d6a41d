# GF102 negative: DCGAN step. `fake.detach()` is passed straight to the
# discriminator and never kept; `label.fill_` mutates a constant target after
# the backward that used it. Neither GF102 nor GF101 applies.
import torch
import torch.nn as nn

netG = nn.Sequential(nn.Linear(100, 784), nn.Tanh())
netD = nn.Sequential(nn.Linear(784, 1), nn.Sigmoid())
criterion = nn.BCELoss()
optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
real_label, fake_label = 1.0, 0.0

for real in [torch.rand(64, 784) * 2 - 1 for _ in range(10)]:
    netD.zero_grad()
    label = torch.full((real.size(0),), real_label)
    errD_real = criterion(netD(real).view(-1), label)
    errD_real.backward()
    fake = netG(torch.randn(real.size(0), 100))
    label.fill_(fake_label)
    errD_fake = criterion(netD(fake.detach()).view(-1), label)
    errD_fake.backward()
    optD.step()
    netG.zero_grad()
    label.fill_(real_label)
    errG = criterion(netD(fake).view(-1), label)
    errG.backward()
    optG.step()
