# GF204 positive without a fix: an encoder and a probe head trained by two
# optimizers. The encoder accumulates over 2 batches, but its clear runs every
# batch, outside the window test, so each encoder step sees only the last
# batch's half-scaled gradient. The probe's backward comes after the encoder's
# step, so it does not feed that step and does not excuse the clear.
import torch
import torch.nn as nn
import torch.nn.functional as F

encoder = nn.Sequential(nn.Linear(12, 24), nn.Tanh())
probe = nn.Linear(24, 3)
enc_opt = torch.optim.SGD(encoder.parameters(), lr=0.05, momentum=0.9)
probe_opt = torch.optim.Adam(probe.parameters(), lr=1e-3)
window = 2
batches = [(torch.randn(16, 12), torch.randint(0, 3, (16,))) for _ in range(10)]

for epoch in range(3):
    for n, (x, y) in enumerate(batches):
        feats = encoder(x)
        recon = (feats.pow(2).mean() - 1.0).abs() / window
        recon.backward()
        if (n + 1) % window == 0:
            enc_opt.step()
        enc_opt.zero_grad()

        probe_opt.zero_grad()
        F.cross_entropy(probe(feats.detach()), y).backward()
        probe_opt.step()
