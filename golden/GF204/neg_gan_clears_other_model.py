# GF204 negative: a GAN generator step. `netD.zero_grad()` between the
# generator's backward and `optG.step()` clears the discriminator's gradients
# (filled by errG.backward()); optG holds only netG's parameters.
import torch
import torch.nn as nn

netG = nn.Sequential(nn.Linear(16, 32), nn.Tanh())
netD = nn.Sequential(nn.Linear(32, 1))
optD = torch.optim.Adam(netD.parameters(), lr=2e-4)
optG = torch.optim.Adam(netG.parameters(), lr=2e-4)
criterion = nn.BCEWithLogitsLoss()
loader = [torch.randn(8, 32) for _ in range(100)]

for real in loader:
    fake = netG(torch.randn(8, 16))
    optD.zero_grad()
    errD = criterion(netD(real), torch.ones(8, 1)) + criterion(netD(fake.detach()), torch.zeros(8, 1))
    errD.backward()
    optD.step()
    optG.zero_grad()
    errG = criterion(netD(fake), torch.ones(8, 1))
    errG.backward()
    netD.zero_grad()
    optG.step()
