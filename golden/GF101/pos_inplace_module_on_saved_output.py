# GF101 positive (detect only): activations and dropouts built with inplace=True
# write into their input. Here that input is a tensor autograd kept for the
# backward pass (a sigmoid's output, a ReLU's output, in place or not), so
# backward() fails in training mode with "modified by an inplace operation".
# The constructor sits in __init__, so no rewrite is offered at the call: build
# the module (or call the function) without inplace=True.
import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedMLP(nn.Module):
    def __init__(self, width=12):
        super().__init__()
        self.inp = nn.Linear(width, width * 2)
        self.out = nn.Linear(width * 2, width)
        self.act = nn.ReLU()
        self.noise = nn.Dropout(p=0.2, inplace=True)
        self.clip = nn.ReLU6(True)

    def forward(self, x):
        g = self.act(self.inp(x))
        g = self.noise(g)
        s = torch.sigmoid(self.out(g))
        s = self.clip(s)
        return s


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, h):
        # relu_ keeps its own output for backward; the in-place dropout then overwrites it
        h = F.relu(self.fc(h), inplace=True)
        return F.dropout(h, 0.5, self.training, inplace=True)

