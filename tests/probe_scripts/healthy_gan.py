"""Healthy: a GAN with two optimizers; the discriminator step uses fake.detach(), the generator step
backpropagates through the discriminator (whose gradients its own zero_grad clears next time)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()
for it in range(6):
    real = torch.randn(16, 2) * 0.5 + 2.0
    z = torch.randn(16, 4)
    fake = G(z)
    D.zero_grad()
    d_loss = bce(D(real), torch.ones(16, 1)) + bce(D(fake.detach()), torch.zeros(16, 1))
    d_loss.backward()
    opt_d.step()
    G.zero_grad()
    g_loss = bce(D(fake), torch.ones(16, 1))
    g_loss.backward()
    opt_g.step()
