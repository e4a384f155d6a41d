# GF101 negative: subscript and attribute targets (`out[idx] /= c`,
# `self.h /= 2`) are never rewritten; GF101 only handles plain names. Here
# nothing saved them either (Linear output, mean output).
import torch
import torch.nn as nn


class AnchorDecoder(nn.Module):
    def __init__(self, dim=64, n_out=4):
        super().__init__()
        self.fc = nn.Linear(dim, n_out)
        self.h = None

    def forward(self, x, idx, c=4.0):
        out = self.fc(x)
        out[idx] /= c
        self.h = out.mean(dim=0)
        self.h /= 2
        return out + self.h
