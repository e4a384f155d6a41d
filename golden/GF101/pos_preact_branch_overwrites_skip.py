# GF101 positive: a pre-activation residual unit whose branch starts with an
# in-place ReLU. Calling the branch on `x` rewrites `x` itself, so the skip
# `h + x` adds relu(x) instead of the input. No error is raised: the run prints
# how far the result is from the intended one. Detect only: drop `inplace=True`.
import torch
import torch.nn as nn


class PreActUnit(nn.Module):
    def __init__(self, ch=6):
        super().__init__()
        self.branch = nn.Sequential(nn.ReLU(inplace=True), nn.Conv1d(ch, ch, 3, padding=1))

    def forward(self, x):
        h = self.branch(x)
        return h + x


if __name__ == "__main__":
    torch.manual_seed(1)
    unit = PreActUnit()
    x = torch.randn(2, 6, 10)
    intended = unit.branch[1](torch.relu(x)) + x
    print("skip error:", (unit(x.clone()) - intended).abs().max().item())
    unit(torch.randn(2, 6, 10)).pow(2).mean().backward()
