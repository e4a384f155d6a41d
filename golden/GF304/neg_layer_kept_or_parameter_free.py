# GF304 negative: modules made in or for `forward` that are registered or
# hold nothing to train.
# - `self.conv` is built in __init__ and only called in forward;
# - `self.proj` is built lazily on the first call, but assigned to an attribute
#   (nn.Module registers it there);
# - an upsampling layer and a norm without affine weights, built in forward,
#   have no parameters at all.
import torch
import torch.nn as nn


class Stem(nn.Module):
    def __init__(self, out_ch):
        super().__init__()
        self.conv = nn.Conv2d(3, out_ch, 3, padding=1)
        self.proj = None

    def forward(self, img):
        h = self.conv(img)
        if self.proj is None:
            self.proj = nn.Conv2d(h.shape[1], 4, 1).to(h.device)
        h = self.proj(h)
        h = nn.Upsample(scale_factor=2)(h)
        return nn.GroupNorm(2, 4, affine=False)(h)
