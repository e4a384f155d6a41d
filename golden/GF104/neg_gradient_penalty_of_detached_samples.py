# GF104 negative: a WGAN-GP discriminator step passes `.data` of the real batch
# and of the generator's samples to the gradient penalty. The penalty still
# carries gradient to the discriminator (it runs D on the interpolates); `.data`
# only keeps the generator, which this optimizer does not step, out of it.
import torch
import torch.nn as nn
from torch import autograd

generator = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
discriminator = nn.Sequential(nn.Linear(16, 1))
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=1e-4)


def gradient_penalty(D, real, fake):
    alpha = torch.rand(real.size(0), 1)
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    grads = autograd.grad(D(mixed).sum(), mixed, create_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


def d_step(loader):
    for real_imgs in loader:
        optimizer_D.zero_grad()
        fake_imgs = generator(torch.randn(real_imgs.size(0), 8))
        d_loss = discriminator(fake_imgs.detach()).mean() - discriminator(real_imgs).mean()
        d_loss = d_loss + 10.0 * gradient_penalty(discriminator, real_imgs.data, fake_imgs.data)
        d_loss.backward()
        optimizer_D.step()
