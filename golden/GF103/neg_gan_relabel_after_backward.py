# GF103 negative: a DCGAN-style discriminator step refills its input buffers
# through .data: the noise before the generator's forward, the labels after the
# real batch's backward(). No pending graph saved either buffer, and neither is a
# parameter, so nothing is moved.
import torch
import torch.nn as nn

netD = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
netG = nn.Linear(2, 4)
optD = torch.optim.SGD(netD.parameters(), lr=0.1)
criterion = nn.BCELoss()
noise = torch.FloatTensor(8, 2)
label = torch.FloatTensor(8, 1)

for real in [torch.randn(8, 4) for _ in range(3)]:
    optD.zero_grad()
    label.data.fill_(1.0)
    err_real = criterion(netD(real), label)
    err_real.backward()
    noise.data.normal_(0, 1)
    fake = netG(noise)
    label.data.fill_(0.0)
    err_fake = criterion(netD(fake.detach()), label)
    err_fake.backward()
    optD.step()
