# GF101 negative: in-place activations whose input is not read again as values.
# The first unit rebinds `x` to the branch's result; the second reads only the
# input's shape afterwards; the third branch starts with a convolution, so its
# in-place ReLU writes the convolution's fresh output, not `x`.
import torch
import torch.nn as nn


class Rebinds(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.branch = nn.Sequential(nn.ReLU(inplace=True), nn.Conv1d(ch, ch, 1))

    def forward(self, x):
        x = self.branch(x)
        return x * 2


class ReadsShape(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = self.act(x)
        return h.view(x.shape[0], -1)


class ConvFirst(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.branch = nn.Sequential(nn.Conv1d(ch, ch, 3, padding=1), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.branch(x) + x


if __name__ == "__main__":
    x = torch.randn(2, 4, 5)
    before = x.clone()
    net = nn.Sequential(nn.Conv1d(4, 4, 1), ConvFirst(), Rebinds(), ReadsShape())
    print(net(x).shape, torch.equal(x, before))
