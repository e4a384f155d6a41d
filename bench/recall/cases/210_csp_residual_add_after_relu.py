"""Source: https://github.com/argusswift/YOLOv4-pytorch/issues/247
Title: When I set the activate='relu', I met the RuntimeError. (Solved)
What went wrong: the CSP residual block ends in a convolution unit whose activation is a ReLU, and
the block then adds the shortcut with `out += residual`; the in-place add overwrites the ReLU
output that ReLU's backward needs, so backward() raises (the reporter fixed it with
`out = out + residual`).
runs: raises RuntimeError "one of the variables needed for gradient computation has been modified by an inplace operation" (output 0 of Relu, torch 2.13 CPU) in backward()
scope: documented
"""
import torch
import torch.nn as nn


class ConvUnit(nn.Module):
    def __init__(self, c_in, c_out, k):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c_out)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class ResidualBlock(nn.Module):
    def __init__(self, channels, hidden):
        super().__init__()
        self.block = nn.Sequential(ConvUnit(channels, hidden, 1), ConvUnit(hidden, channels, 3))

    def forward(self, x):
        residual = x
        out = self.block(x)
        out += residual  # expect: GF101
        return out


net = nn.Sequential(ConvUnit(3, 8, 3), ResidualBlock(8, 4), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 2))
loss = nn.functional.cross_entropy(net(torch.randn(2, 3, 16, 16)), torch.tensor([0, 1]))
loss.backward()
