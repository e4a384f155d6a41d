"""Source: https://github.com/rosinality/vq-vae-2-pytorch/issues/60
Title: ResBlock with inplace relu?
What went wrong: the residual block's stack starts with `nn.ReLU(inplace=True)`, which rewrites the
block's input tensor; `out += input` afterwards adds the post-activation values instead of the
pre-activation skip the design intends (the maintainer confirmed the bug and fixed it).
runs: trains without error; the skip adds relu(input): the run prints the mismatch with an out-of-place ReLU
scope: extension
"""
import torch
import torch.nn as nn


class ResBlock(nn.Module):
    def __init__(self, in_channel, channel):
        super().__init__()
        self.conv = nn.Sequential(
            nn.ReLU(inplace=True),
            nn.Conv2d(in_channel, channel, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(channel, in_channel, 1),
        )

    def forward(self, input):
        out = self.conv(input)  # expect: GF101
        out += input
        return out


torch.manual_seed(0)
encoder = nn.Sequential(nn.Conv2d(3, 8, 4, stride=2, padding=1), ResBlock(8, 4))
x = torch.randn(2, 3, 8, 8)
pre = encoder[0](x)
reference = encoder[1].conv[1:](torch.relu(pre)) + pre
print("skip mismatch:", (encoder[1](pre.clone()) - reference).abs().max().item())
encoder(x).pow(2).mean().backward()
