# GF101 negative: the in-place targets are a NumPy array (blur kernel, like
# goliath's `blur_kernel /= np.sum(blur_kernel)`) and a Python float; none of
# them is an autograd tensor.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def gaussian_kernel(size=5, sigma=1.0):
    ax = np.arange(size) - (size - 1) / 2.0
    kernel = np.exp(-(ax[:, None] ** 2 + ax[None, :] ** 2) / (2 * sigma ** 2))
    kernel /= kernel.sum()
    return kernel


class Blur(nn.Module):
    def __init__(self, size=5, sigma=1.0):
        super().__init__()
        k = torch.from_numpy(gaussian_kernel(size, sigma)).float()
        self.register_buffer("weight", k[None, None])

    def forward(self, x):
        gain = x.shape[1] ** 0.5
        gain /= 2.0
        c = x.shape[1]
        w = self.weight.expand(c, 1, -1, -1)
        return F.conv2d(x, w, padding=w.shape[-1] // 2, groups=c) * gain
