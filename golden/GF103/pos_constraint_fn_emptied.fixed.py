# GF103 positive: a non-negativity helper (NMF-style decoder) is called in the
# inner loop between forward and backward. Its only statement is the `.data`
# write, so the fixed helper body becomes `pass`; the clamp moves after
# `opt.step()` at the inner loop body's indentation.
import torch
import torch.nn as nn


class NonNegAutoEncoder(nn.Module):
    def __init__(self, n_in=500, k=20):
        super().__init__()
        self.encoder = nn.Linear(n_in, k)
        self.decoder = nn.Linear(k, n_in, bias=False)

    def forward(self, x):
        return self.decoder(torch.relu(self.encoder(x)))


def enforce_nonneg(layer):
    pass


model = NonNegAutoEncoder()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(20):
    for x in torch.rand(10, 64, 500):
        recon = model(x)
        enforce_nonneg(model.decoder)
        loss = ((recon - x) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            model.decoder.weight.clamp_(min=0.0)
    print(epoch, loss.item())
