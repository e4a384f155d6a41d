# GF307 negative: a GAN. In the discriminator step the generator's output is
# detached on purpose (optD holds only D); the generator step keeps the graph.
import torch
import torch.nn as nn

G = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
D = nn.Sequential(nn.Linear(16, 1))
optD = torch.optim.Adam(D.parameters(), lr=2e-4)
optG = torch.optim.Adam(G.parameters(), lr=2e-4)
bce = nn.BCEWithLogitsLoss()

for step in range(100):
    real, z = torch.randn(32, 16), torch.randn(32, 8)
    fake = G(z)
    lossD = bce(D(real), torch.ones(32, 1)) + bce(D(fake.detach()), torch.zeros(32, 1))
    optD.zero_grad()
    lossD.backward()
    optD.step()
    lossG = bce(D(fake), torch.ones(32, 1))
    optG.zero_grad()
    lossG.backward()
    optG.step()
