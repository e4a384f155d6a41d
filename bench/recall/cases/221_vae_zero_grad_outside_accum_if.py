"""Source: https://github.com/gaozhihan/PreDiff/issues/32
Title: Timing to call .zero_grad()
What went wrong: the VAE training script accumulates gradients over several batches and steps the
autoencoder and discriminator optimizers only under the accumulation test, but calls their
`zero_grad()` outside that `if`, on every batch, so the accumulated gradients are erased before
the step uses them (fixed in the linked pull request).
runs: trains; the autoencoder gradient is cleared every batch, so each step uses only the last batch of its window
scope: documented
"""
import torch
import torch.nn as nn

vae = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 3, padding=1))
disc = nn.Sequential(nn.Conv2d(1, 4, 4, stride=2), nn.Flatten(), nn.LazyLinear(1))
disc(torch.randn(1, 1, 8, 8))
opt_ae = torch.optim.Adam(vae.parameters(), lr=1e-4)
opt_disc = torch.optim.Adam(disc.parameters(), lr=1e-4)
accumulate_grad_batches = 4
batches = [torch.randn(2, 1, 8, 8) for _ in range(8)]
for batch_idx, x in enumerate(batches):
    rec = vae(x)
    ae_loss = (rec - x).abs().mean() - 0.1 * disc(rec).mean()
    opt_ae.zero_grad()  # expect: GF204
    ae_loss.backward()
    if (batch_idx + 1) % accumulate_grad_batches == 0:
        opt_ae.step()
    d_loss = nn.functional.softplus(-disc(x)).mean() + nn.functional.softplus(disc(rec.detach())).mean()
    opt_disc.zero_grad()
    d_loss.backward()
    if (batch_idx + 1) % accumulate_grad_batches == 0:
        opt_disc.step()
print("grad norm used by the step:", vae[0].weight.grad.norm().item())
