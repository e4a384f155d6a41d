"""Source: https://github.com/Hsintien-Ng/idinvert_pytorch-reproduced/issues/1
Title: optimizer_D.zero_grad() missing?
What went wrong: in the encoder-training loop the encoder optimizer is cleared each step but
the discriminator's optimizer never is, so D's gradients pile up across iterations.
runs: trains but D's updates use the running sum of all past gradients
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

E = nn.Sequential(nn.Linear(64, 16))
G = nn.Sequential(nn.Linear(16, 64))
D = nn.Sequential(nn.Linear(64, 1))
optimizer_E = torch.optim.Adam(E.parameters(), lr=1e-4)
optimizer_D = torch.optim.Adam(D.parameters(), lr=1e-4)
data = [torch.randn(8, 64) for _ in range(10)]

for step, x_real in enumerate(data):
    x_rec = G(E(x_real))
    d_real = D(x_real)
    d_fake = D(x_rec.detach())
    loss_d = F.softplus(d_fake).mean() + F.softplus(-d_real).mean()
    loss_d.backward()  # expect: GF205
    optimizer_D.step()

    optimizer_E.zero_grad()
    loss_e = F.mse_loss(G(E(x_real)), x_real) + F.softplus(-D(G(E(x_real)))).mean()
    loss_e.backward()
    optimizer_E.step()
