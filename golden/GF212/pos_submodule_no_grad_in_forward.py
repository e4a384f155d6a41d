# GF212 positive: the model's forward runs its encoder under torch.no_grad(), but
# the optimizer is built from the whole model's parameters. The encoder's weights
# never get a gradient, so the training loop never changes them (and an
# optimizer that decays weights without a gradient still moves them).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(6, 24), nn.Tanh())
        self.head = nn.Linear(24, 1)

    def forward(self, x):
        with torch.no_grad():
            h = self.encoder(x)
        return self.head(h)


net = Regressor()
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
for _ in range(4):
    x, y = torch.randn(32, 6), torch.randn(32, 1)
    opt.zero_grad()
    F.mse_loss(net(x), y).backward()
    opt.step()
