"""Source: https://github.com/pytorch/pytorch/issues/4412
Title: How to use net.cuda() when Network class has list or dict wich contains nn layers?
What went wrong: the region layer keeps two `nn.Sequential` conv stacks in a plain list
(`self.x = [nn.Sequential(...), nn.Sequential(...)]`); `net.cuda()` does not move them and
their parameters are invisible to `parameters()` (the reporter fell back to `add_module`).
runs: runs; `net.parameters()` is empty (the run prints 0)
scope: documented
"""
import torch
import torch.nn as nn


def conv_pair(ch):
    return nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1), nn.BatchNorm2d(ch), nn.Conv2d(ch, ch, 1))


class PatchRegions(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.branches = [conv_pair(ch), conv_pair(ch)]  # expect: GF304

    def forward(self, x):
        top, bottom = x.chunk(2, dim=2)
        return torch.cat([self.branches[0](top), self.branches[1](bottom)], dim=2)


net = PatchRegions()
print(len(list(net.parameters())), net(torch.randn(1, 4, 6, 6)).shape)
