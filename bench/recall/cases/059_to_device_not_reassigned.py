"""Source: https://github.com/Michedev/VAE_anomaly_detection/issues/10
Title: x is not reassigned after Moving to GPU
What went wrong: the training step calls `x.to(device=self.device)` without assigning the
result, so the batch stays on the CPU.
runs: on a CUDA machine raises a device-mismatch error; on CPU the line does nothing
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self, device=None):
        super().__init__()
        self.device = device
        self.enc = nn.Linear(20, 8)
        self.dec = nn.Linear(4, 20)

    def training_step(self, x):
        if self.device:
            x.to(device=self.device)  # expect: GF209
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        recon = self.dec(z)
        kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(-1).mean()
        return F.mse_loss(recon, x) + kl


vae = VAE()
opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
loss = vae.training_step(torch.randn(16, 20))
loss.backward()
opt.step()
