"""Source: https://github.com/iMED-Lab/ER-Net/pull/3
Title: replace out+=residual with out=out+residual
What went wrong: the 3D residual encoder block applies conv, norm and ReLU and then adds the
block input with `out += residual`; the ReLU saved its output for backward, the in-place add
changes it, and backward() fails (pytorch 1.13 error quoted in the pull request).
runs: raises RuntimeError "... modified by an inplace operation: [torch.FloatTensor [2, 4, 6, 6, 6]], which is output 0 of Relu" in backward()
scope: documented
"""
import torch
import torch.nn as nn


class ResEncoder3d(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv1 = nn.Conv3d(ch, ch, 3, padding=1)
        self.bn1 = nn.BatchNorm3d(ch)
        self.conv2 = nn.Conv3d(ch, ch, 3, padding=1)
        self.bn2 = nn.BatchNorm3d(ch)
        self.relu = nn.ReLU(inplace=False)

    def forward(self, x):
        residual = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out += residual  # expect: GF101
        return out


model = nn.Sequential(nn.Conv3d(1, 4, 3, padding=1), ResEncoder3d(4), nn.Conv3d(4, 1, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
volume, mask = torch.randn(2, 1, 6, 6, 6), torch.rand(2, 1, 6, 6, 6).round()
optimizer.zero_grad()
loss = nn.functional.binary_cross_entropy_with_logits(model(volume), mask)
loss.backward()
optimizer.step()
