# GF101 positive: `ConvAct` is a unit of this file whose forward returns what its
# ReLU submodule gives, so its output is kept by ReLU's backward; a Sequential of
# two such units ends in one too. The bottleneck adds its shortcut into that
# output in place and backward raises. Rewrite: `y = y + x`.
import torch
import torch.nn as nn


class ConvAct(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.conv(x))


class Bottleneck(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.inner = nn.Sequential(ConvAct(ch, ch // 2), ConvAct(ch // 2, ch))

    def forward(self, x):
        y = self.inner(x)
        y = y + x
        return y


if __name__ == "__main__":
    Bottleneck(4)(torch.randn(1, 4, 5, 5)).sum().backward()
