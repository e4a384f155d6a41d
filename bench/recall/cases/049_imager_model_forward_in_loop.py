"""Source: https://github.com/MPoL-dev/MPoL/issues/151
Title: Direct `.forward()` calls not recommended
What went wrong: the training loops call `model.forward()` directly instead of `model()`,
bypassing the hook machinery of nn.Module.__call__.
runs: trains but module hooks are skipped
scope: documented
"""
import torch
import torch.nn as nn


class SimpleNet(nn.Module):
    def __init__(self, npix=32):
        super().__init__()
        self.base_cube = nn.Parameter(torch.zeros(1, npix, npix))
        self.conv = nn.Conv2d(1, 1, 3, padding=1)

    def forward(self):
        return self.conv(torch.exp(self.base_cube).unsqueeze(0))


def train(model, data, optimizer, epochs=5):
    model.train()
    for iteration in range(epochs):
        optimizer.zero_grad()
        vis = model.forward()  # expect: GF305
        loss = ((vis - data) ** 2).mean()
        loss.backward()
        optimizer.step()
    return loss.item()


model = SimpleNet()
train(model, torch.randn(1, 1, 32, 32), torch.optim.Adam(model.parameters(), lr=0.3))
