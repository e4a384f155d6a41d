"""Source: https://github.com/Lornatang/SRGAN-PyTorch/issues/1
Title: Learning rate scheduler is working incorrect
What went wrong: the generator and discriminator schedules are `StepLR(step_size=epochs // 2,
gamma=0.1)`, periods counted in epochs, but both are stepped inside the batch loop, so the
learning rate drops tenfold every `epochs // 2` batches and quickly reaches zero.
runs: trains; after a few batches both learning rates are near zero (the run prints them)
scope: documented
"""
import torch
import torch.nn as nn

epochs = 4
netG = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.PReLU(), nn.Conv2d(8, 3, 3, padding=1))
netD = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.LeakyReLU(0.2), nn.Flatten(), nn.LazyLinear(1))
optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-4)
netD(torch.randn(1, 3, 16, 16))
optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-4)
schedulerG = torch.optim.lr_scheduler.StepLR(optimizerG, step_size=epochs // 2, gamma=0.1)
schedulerD = torch.optim.lr_scheduler.StepLR(optimizerD, step_size=epochs // 2, gamma=0.1)
bce = nn.BCEWithLogitsLoss()
loader = [(torch.randn(2, 3, 16, 16), torch.randn(2, 3, 16, 16)) for _ in range(5)]
for epoch in range(epochs):
    for lr_img, hr_img in loader:
        fake = netG(lr_img)
        optimizerD.zero_grad()
        d_loss = bce(netD(hr_img), torch.ones(2, 1)) + bce(netD(fake.detach()), torch.zeros(2, 1))
        d_loss.backward()
        optimizerD.step()
        optimizerG.zero_grad()
        g_loss = nn.functional.mse_loss(fake, hr_img) + 1e-3 * bce(netD(fake), torch.ones(2, 1))
        g_loss.backward()
        optimizerG.step()
        schedulerD.step()  # expect: GF202
        schedulerG.step()
    print(epoch, optimizerG.param_groups[0]["lr"], optimizerD.param_groups[0]["lr"])
