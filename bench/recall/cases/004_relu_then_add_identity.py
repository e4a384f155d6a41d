"""Source: https://github.com/pytorch/vision/issues/807
Title: Why in-place operation for ReLU is used in models/examples?
What went wrong: in a pre-activation variant of the basic block the ReLU output is
incremented in place with the skip connection; ReLU saved that output for backward.
runs: raises RuntimeError (modified by an inplace operation) in backward()
scope: documented
"""
import torch
import torch.nn as nn


class PreActBlock(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)
        self.relu = nn.ReLU()

    def forward(self, x):
        identity = x
        out = self.conv2(self.relu(self.conv1(x)))
        out = self.relu(out)
        out += identity  # expect: GF101
        return out


if __name__ == "__main__":
    block = PreActBlock()
    block(torch.randn(2, 8, 6, 6)).sum().backward()
