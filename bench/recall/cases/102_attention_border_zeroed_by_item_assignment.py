"""Source: https://github.com/AggMan96/RK-Net/issues/9
Title: RuntimeError: ... modified by an inplace operation ... which is output 0 of ReluBackward0
What went wrong: an attention map is the ReLU of a conv, and its border columns and rows are
then set to zero with item assignments; ReLU saved its output for backward, so the
assignments overwrite a saved tensor. The reply: clone the map before zeroing the borders.
runs: raises RuntimeError (modified by an inplace operation) in backward()
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Polish(nn.Module):
    def __init__(self):
        super().__init__()
        self.att_conv = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, feat):
        att = F.relu(self.att_conv(feat))
        att[:, :, :, 0] = 0  # expect: GF101
        att[:, :, :, -1] = 0
        att[:, :, 0, :] = 0
        att[:, :, -1, :] = 0
        return feat * att


if __name__ == "__main__":
    m = Polish()
    m(torch.randn(2, 8, 6, 6)).sum().backward()
