# GF206 negative: in a GAN iteration the generator's clip runs after the
# discriminator's step but before the generator's own backward and step.
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
    torch.nn.utils.clip_grad_norm_(netD.parameters(), 1.0)
    optD.step()
    optG.zero_grad()
    errG = criterion(netD(fake), torch.ones(8, 1))
    errG.backward()
    torch.nn.utils.clip_grad_norm_(netG.parameters(), 1.0)
    optG.step()
