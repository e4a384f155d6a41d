import torch
import torch.nn as nn


class Renderer(nn.Module):
    """One module holds the generator and the discriminator; the training step calls the second by a method."""

    def __init__(self, dim=8):
        super().__init__()
        self.gen = nn.Linear(dim, dim)
        self.disc = nn.Linear(dim, 1)

    def forward(self, z):
        return torch.tanh(self.gen(z))

    def run_discriminator(self, x):
        return self.disc(x)


def run(network, loader, optimizer_discriminator, optimizer):
    for z, real in loader:
        fake = network(z)
        # discriminator step: the generator's output is cut on purpose
        d_real = network.module.run_discriminator(real)
        d_fake = network.module.run_discriminator(fake.detach())
        loss_d = (d_real - 1).pow(2).mean() + d_fake.pow(2).mean()
        optimizer_discriminator.zero_grad()
        loss_d.backward()
        optimizer_discriminator.step()
        loss_g = (network.module.run_discriminator(fake) - 1).pow(2).mean()
        optimizer.zero_grad()
        loss_g.backward()
        optimizer.step()
