"""Source: http://discuss.pytorch.org/t/in-place-operation-and-resnet/10724
Title: In-place operation and ResNet
What went wrong: the block's input `x` is fed to a second conv and then the conv's
output is added into `x` with `+=`, overwriting the tensor that conv saved for backward.
runs: raises RuntimeError (modified by an inplace operation) in backward()
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualUnit(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_in = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn_in = nn.BatchNorm2d(8)
        self.conv_res = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn_res = nn.BatchNorm2d(8)

    def forward(self, x):
        x = F.relu(self.bn_in(self.conv_in(x)))
        residual = self.bn_res(self.conv_res(x))
        x += residual  # expect: GF101
        return F.relu(x)


if __name__ == "__main__":
    net = ResidualUnit()
    out = net(torch.randn(2, 3, 8, 8))
    out.mean().backward()
