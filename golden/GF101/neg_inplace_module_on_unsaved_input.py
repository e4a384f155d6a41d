# GF101 negative: in-place activations and dropouts whose input autograd did not
# keep. Linear, convolution and batch norm save their *input*, not their output,
# so an in-place ReLU or dropout right after them is the usual memory saving; a
# ReLU after an addition (a residual sum) is the same. A dropout built without
# inplace=True, and code under no_grad, change nothing either.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)
        self.drop = nn.Dropout2d(0.1, inplace=True)
        self.soft_drop = nn.Dropout(0.1)

    def forward(self, x):
        y = self.bn(self.conv(x))
        y = self.relu(y)
        y = self.relu(y + x)
        z = torch.sigmoid(y)
        z = self.soft_drop(z)
        return self.drop(self.conv(z))


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.act = nn.LeakyReLU(0.2, inplace=False)

    def forward(self, h):
        h = F.dropout(self.fc(h), 0.5, self.training, inplace=True)
        return self.act(torch.tanh(h))


@torch.no_grad()
def probe(model, x):
    s = torch.sigmoid(model(x))
    return F.relu(s, inplace=True)
