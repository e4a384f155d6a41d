# GF101 positive: sigmoid saves its OUTPUT for backward, so scaling the gate
# in place afterwards (`s *= 2`) makes backward raise. Squeeze-and-excitation
# gate stretched to (0, 2). The trailing comment must survive the rewrite.
import torch
import torch.nn as nn


class SqueezeExcite(nn.Module):
    def __init__(self, channels=32, reduction=4):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(channels, channels // reduction, 1)
        self.fc2 = nn.Conv2d(channels // reduction, channels, 1)

    def forward(self, x):
        z = self.fc2(torch.relu(self.fc1(self.pool(x))))
        s = torch.sigmoid(z)
        s = s * 2  # gate in (0, 2) so the block can also amplify
        return x * s
