# GF203 negative: a GAN with one scheduler per optimizer. The discriminator's
# scheduler steps before the generator's optimizer, which it does not drive.
import torch
import torch.nn as nn

netG = nn.Sequential(nn.Linear(16, 32), nn.Tanh())
netD = nn.Sequential(nn.Linear(32, 1))
optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
schedD = torch.optim.lr_scheduler.LambdaLR(optD, lambda it: 1.0 - it / 10000)
schedG = torch.optim.lr_scheduler.LambdaLR(optG, lambda it: 1.0 - it / 10000)
criterion = nn.BCEWithLogitsLoss()
loader = [torch.randn(8, 32) for _ in range(100)]

for real in loader:
    noise = torch.randn(8, 16)
    fake = netG(noise)
    optD.zero_grad()
    errD = criterion(netD(real), torch.ones(8, 1)) + criterion(netD(fake.detach()), torch.zeros(8, 1))
    errD.backward()
    optD.step()
    schedD.step()
    optG.zero_grad()
    errG = criterion(netD(fake), torch.ones(8, 1))
    errG.backward()
    optG.step()
    schedG.step()
