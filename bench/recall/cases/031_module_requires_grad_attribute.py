"""Source: https://github.com/CSCYQJ/MICCAI23-ProtoContra-SFDA/issues/18
Title: Implementation bug? It seems like the last layer is not frozen?
What went wrong: the last layer is "frozen" with `self.model.outc.requires_grad = False`;
on an nn.Module that only sets a Python attribute, its parameters still get trained.
runs: trains but outc's weights change
scope: extension (requires_grad set on a module instead of its parameters)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class UNetLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(1, 8, 3, padding=1)
        self.outc = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        return self.outc(F.relu(self.enc(x)))


class Adapter:
    def __init__(self):
        self.model = UNetLike()
        self.model.outc.requires_grad = False  # expect: GF210
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)

    def step(self, img):
        probs = self.model(img).softmax(dim=1)
        loss = -(probs * probs.clamp_min(1e-6).log()).sum(dim=1).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


if __name__ == "__main__":
    a = Adapter()
    a.step(torch.randn(2, 1, 16, 16))
