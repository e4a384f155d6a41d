# GF203 positive in a GAN loop: the discriminator's scheduler steps before its
# optimizer. The swap is offered, but the iteration has two backward passes and
# two optimizers, which the train-loop check does not render: the verdict is
# untestable, and `gradfix apply` leaves the file alone unless asked.
import torch
import torch.nn as nn

netG = nn.Sequential(nn.Linear(16, 32), nn.Tanh())
netD = nn.Sequential(nn.Linear(32, 1))
optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
schedD = torch.optim.lr_scheduler.ExponentialLR(optD, gamma=0.9999)
criterion = nn.BCEWithLogitsLoss()
loader = [torch.randn(8, 32) for _ in range(100)]

for real in loader:
    fake = netG(torch.randn(8, 16))
    optD.zero_grad()
    errD = criterion(netD(real), torch.ones(8, 1)) + criterion(netD(fake.detach()), torch.zeros(8, 1))
    errD.backward()
    schedD.step()
    optD.step()
    optG.zero_grad()
    errG = criterion(netD(fake), torch.ones(8, 1))
    errG.backward()
    optG.step()
