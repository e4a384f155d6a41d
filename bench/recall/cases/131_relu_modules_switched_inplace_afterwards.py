"""Source: https://github.com/qianyu-dlut/MVANet/issues/2
Title: Training error : Relu variables has been modified by an inplace operation
What went wrong: the layers are built with ordinary ReLUs, but the model's constructor then
walks `self.modules()` and sets `m.inplace = True` on every ReLU; a ReLU whose input another
layer saved for backward then overwrites that input and backward() fails.
runs: raises RuntimeError (modified by an inplace operation) in backward()
scope: extension (inplace switched on by attribute after construction)
"""
import torch
import torch.nn as nn


class RefineBlock(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.gate = nn.Conv2d(ch, ch, 1)
        self.act = nn.ReLU()
        self.body = nn.Conv2d(ch, ch, 3, padding=1)
        for m in self.modules():
            if isinstance(m, (nn.ReLU, nn.Dropout)):
                m.inplace = True

    def forward(self, x):
        g = torch.sigmoid(self.gate(x)) * x
        x = self.act(x)  # expect: GF101
        return self.body(x) + g


if __name__ == "__main__":
    block = RefineBlock()
    feats = torch.randn(2, 8, 6, 6, requires_grad=True)
    block(feats * 2).mean().backward()
