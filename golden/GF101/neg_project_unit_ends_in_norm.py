# GF101 negative: units of this file whose output no op keeps for backward. The
# first ends in batch norm (it saves its input, not its output); the second picks
# its activation at run time (maybe an Identity); the third returns the
# activation plus a skip, a new tensor. Adding into each in place trains.
import torch
import torch.nn as nn


class ConvNorm(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)
        self.norm = nn.BatchNorm2d(ch)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.norm(self.act(self.conv(x)))


class MaybeAct(nn.Module):
    def __init__(self, ch, relu=False):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 1)
        self.act = nn.ReLU() if relu else nn.Identity()

    def forward(self, x):
        return self.act(self.conv(x))


class ActPlusSkip(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 1)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.conv(x)) + x


class Stack(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.a = nn.Sequential(ConvNorm(ch), ConvNorm(ch))
        self.b = MaybeAct(ch)
        self.c = ActPlusSkip(ch)

    def forward(self, x):
        y = self.a(x)
        y += x
        z = self.b(y)
        z += y
        w = self.c(z)
        w += z
        return w


if __name__ == "__main__":
    Stack(3)(torch.randn(2, 3, 4, 4)).sum().backward()
