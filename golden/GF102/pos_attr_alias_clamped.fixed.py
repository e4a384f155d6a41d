# GF102 positive: the autoencoder keeps a detached reference for TensorBoard
# and clamps it in place. detach() shares storage, so the clamp also changes
# `recon`, which the loss reads next (silently wrong loss and gradients).
# Fix: `self.last_recon = recon.detach().clone()`.
import torch
import torch.nn as nn
import torch.nn.functional as F


class AutoEncoder(nn.Module):
    def __init__(self, dim=784, latent=32):
        super().__init__()
        self.enc = nn.Linear(dim, latent)
        self.dec = nn.Linear(latent, dim)
        self.last_recon = None

    def forward(self, x):
        recon = self.dec(F.relu(self.enc(x)))
        self.last_recon = recon.detach().clone()
        self.last_recon.clamp_(0.0, 1.0)  # image range for the preview grid
        return recon


model = AutoEncoder()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for x in [torch.rand(16, 784) for _ in range(5)]:
    recon = model(x)
    loss = F.mse_loss(recon, x)
    opt.zero_grad()
    loss.backward()
    opt.step()
