# GF101 negative: `generate()` is an inference entry point that nothing in
# this file calls; the script that calls it does so under torch.no_grad(), so
# the sigmoid saves nothing and the in-place peak masking is fine. A function
# named like inference (generate, predict, evaluate, sample, ...) with no
# caller in the file is taken to run with gradients off.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x):
        return self.head(x)

    def generate(self, x, threshold=0.3):
        heat = torch.sigmoid(self.head(x))
        heat *= (F.max_pool2d(heat, 3, 1, 1) == heat).float()
        return heat > threshold
