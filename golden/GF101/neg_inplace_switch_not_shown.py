# GF101 negative: switches to in-place that do not reach a saved tensor. The
# walk of `self.modules()` turns on `inplace` only for Dropout, not the ReLU that
# runs on the gated value; the LeakyReLU is switched in another method that
# nothing here is shown to call; the Tanh-gated ReLU of the third block runs on a
# convolution's output, which the convolution does not keep.
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.gate = nn.Conv2d(ch, ch, 1)
        self.act = nn.ReLU()
        self.leaky = nn.LeakyReLU(0.1)
        self.drop = nn.Dropout(0.1)
        for mod in self.modules():
            if isinstance(mod, nn.Dropout):
                mod.inplace = True

    def fast_mode(self):
        self.leaky.inplace = True

    def forward(self, x):
        g = torch.sigmoid(self.gate(x)) * x
        x = self.act(x)
        x = self.leaky(x)
        return self.drop(self.gate(x)) + g


class ConvThenAct(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)
        self.act = nn.ReLU()
        self.act.inplace = True

    def forward(self, x):
        return self.act(self.conv(x))


if __name__ == "__main__":
    net = nn.Sequential(Gate(), ConvThenAct())
    net(torch.randn(1, 4, 6, 6) * 2).mean().backward()
