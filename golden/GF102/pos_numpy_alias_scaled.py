# GF102 positive: `.detach().numpy()` aliases the tensor's storage on CPU, so
# scaling the NumPy preview to 0..255 in place rewrites `mask`, which the loss
# and sigmoid's backward both read (NumPy writes do not even bump the version
# counter, so nothing raises). Fix: `mask.detach().clone().numpy()`.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskHead(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.conv = nn.Conv2d(ch, 1, 1)
        self.previews = []

    def forward(self, feats):
        mask = torch.sigmoid(self.conv(feats))
        preview = mask.detach().numpy()
        preview *= 255.0
        self.previews.append(preview.astype(np.uint8))
        return mask


head = MaskHead()
opt = torch.optim.SGD(head.parameters(), lr=0.1)
feats, target = torch.randn(2, 16, 8, 8), torch.rand(2, 1, 8, 8).round()
loss = F.mse_loss(head(feats), target)
loss.backward()
opt.step()
