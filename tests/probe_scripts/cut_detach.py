"""The encoder's output is detached on its way to the head: the encoder never gets a gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        z = self.encoder(x)
        z = z.detach()
        return self.head(z)


model = Model()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(6):
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
