# GF210 positive: the optimizer is built from a hand-made list of submodules
# that forgets `decoder`, which forward uses: its weights never change (the
# second seed's checklist item on the optimizer's parameter groups).
import itertools

import torch
import torch.nn as nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 32))
        self.decoder = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 784))
        self.head = nn.Linear(32, 10)
        self.act = nn.Sigmoid()

    def forward(self, x):
        z = self.encoder(x)
        return self.act(self.decoder(z)), self.head(z)


model = AutoEncoder()
optimizer = torch.optim.Adam(list(model.encoder.parameters()) + list(model.head.parameters()), lr=1e-3)
groups = torch.optim.SGD([{"params": model.encoder.parameters()}, {"params": model.head.parameters(), "lr": 0.01}],
                         lr=0.1)
chained = torch.optim.AdamW(itertools.chain(model.encoder.parameters(), model.head.parameters()))
