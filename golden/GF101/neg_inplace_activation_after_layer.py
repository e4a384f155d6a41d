"""In-place activations right after a convolution or a linear layer.

Conv2d and Linear save their input, not their output, and an activation applied in place saves
its own result: `F.leaky_relu(h, inplace=True)` and an `nn.LeakyReLU(inplace=True)` module on a
layer's fresh output are the usual memory-saving idiom and backward works.
"""
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3, padding=1)
        self.norm = nn.BatchNorm2d(width)
        self.proj = nn.Linear(width, width)
        self.act = nn.LeakyReLU(0.2, inplace=True)

    def forward(self, img):
        h = self.conv(img)
        h = F.leaky_relu(h, 0.2, inplace=True)
        h = self.norm(h)
        z = self.proj(h.mean(dim=(2, 3)))
        z = self.act(z)
        return z
