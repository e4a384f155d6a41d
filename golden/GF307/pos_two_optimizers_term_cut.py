# GF307 positive next to the two-optimizer negatives: an encoder and a decoder each have their own
# optimizer and both step after the one backward, but the sparsity penalty reads the code only
# through `.detach()`: it trains neither model, so the term does nothing.
import torch
import torch.nn as nn
import torch.nn.functional as F

encoder = nn.Linear(32, 8)
decoder = nn.Linear(8, 32)
opt_enc = torch.optim.Adam(encoder.parameters(), lr=1e-3)
opt_dec = torch.optim.Adam(decoder.parameters(), lr=1e-3)

for x in torch.randn(10, 4, 32):
    code = encoder(x)
    recon = decoder(code)
    sparsity = code.detach().abs().mean()
    loss = F.mse_loss(recon, x) + 1e-2 * sparsity
    opt_enc.zero_grad()
    opt_dec.zero_grad()
    loss.backward()
    opt_enc.step()
    opt_dec.step()
