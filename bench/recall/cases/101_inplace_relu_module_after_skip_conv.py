"""Source: https://github.com/osmr/imgclsmob/issues/13
Title: Inplace ReLU's are unnecessary and wrong
What went wrong: an Xception-style block computes its shortcut conv on the block input, then
runs the body, whose first layer is a ReLU module built with inplace=True, on that same input:
the ReLU overwrites the tensor the shortcut conv saved for its weight gradient.
runs: raises RuntimeError (modified by an inplace operation) in backward()
scope: documented
"""
import torch
import torch.nn as nn


class XceptionUnit(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.shortcut = nn.Conv2d(cin, cout, 1, bias=False)
        self.activ = nn.ReLU(inplace=True)
        self.body = nn.Conv2d(cin, cout, 3, padding=1, bias=False)

    def forward(self, x):
        identity = self.shortcut(x)
        x = self.activ(x)  # expect: GF101
        x = self.body(x)
        return x + identity


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.unit = XceptionUnit(8, 16)

    def forward(self, img):
        return self.unit(self.stem(img)).mean(dim=(2, 3))


if __name__ == "__main__":
    net = Net()
    net(torch.randn(2, 3, 8, 8)).sum().backward()
