# GF201 negative: literal factors below the threshold. A whole-loss `/ 100`
# on the generator loss and CycleGAN's `(loss_D_real + loss_D_fake) * 0.5`
# are not large enough to be a constant-loss-scale hazard.
import torch
import torch.nn as nn
import torch.nn.functional as F

netD = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(64, 1, 4, 1, 1))
netG = nn.Sequential(nn.Conv2d(3, 3, 3, padding=1), nn.Tanh())
optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))

for real_a, real_b in [(torch.randn(1, 3, 64, 64), torch.randn(1, 3, 64, 64)) for _ in range(10)]:
    fake_b = netG(real_a)
    pred_fake = netD(fake_b)
    loss_G_gan = F.mse_loss(pred_fake, torch.ones_like(pred_fake))
    loss_G = (loss_G_gan + 10.0 * F.l1_loss(fake_b, real_b)) / 100
    optG.zero_grad()
    loss_G.backward()
    optG.step()
    pred_real, pred_fake = netD(real_b), netD(fake_b.detach())
    loss_D_real = F.mse_loss(pred_real, torch.ones_like(pred_real))
    loss_D_fake = F.mse_loss(pred_fake, torch.zeros_like(pred_fake))
    loss_D = (loss_D_real + loss_D_fake) * 0.5
    optD.zero_grad()
    loss_D.backward()
    optD.step()
