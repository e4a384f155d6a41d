"""Source: https://github.com/lyongo/NWPU-MOC/issues/4
Title: gradient computation problems
What went wrong: an FPN head keeps its lateral features, each the ReLU of a 1x1 conv, in a
list and adds the upsampled coarser level into the finer one with `+=`; each lateral is a
ReLU output autograd saved, so the in-place add breaks backward. The fix in the thread:
write the sum out of place.
runs: raises RuntimeError (modified by an inplace operation) in backward()
scope: extension (the mutated tensor is an element of a list)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FPNHead(nn.Module):
    def __init__(self, chans=(8, 16, 32), out=8):
        super().__init__()
        self.lateral = nn.ModuleList(nn.Conv2d(c, out, 1) for c in chans)

    def forward(self, feats):
        laterals = [F.relu(conv(f)) for conv, f in zip(self.lateral, feats)]
        for i in range(len(laterals) - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode="nearest")  # expect: GF101
        return laterals[0]


if __name__ == "__main__":
    head = FPNHead()
    feats = [torch.randn(2, 8, 16, 16), torch.randn(2, 16, 8, 8), torch.randn(2, 32, 4, 4)]
    head(feats).sum().backward()
