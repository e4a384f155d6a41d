"""Source: https://github.com/pytorch/pytorch/issues/715
Title: Module: parameters are not included if the module is initialized in a list
What went wrong: hidden layers are appended to `self.hids = []` as [Linear, activation]
pairs, so none of the Linear layers are registered and only the classifier trains.
runs: trains but only the classifier's parameters are in parameters()
scope: documented
"""
import torch
import torch.nn as nn


class SNLINet(nn.Module):
    def __init__(self, n_layers=2, n_hid=32):
        super().__init__()
        self.hids = []  # expect: GF304
        for li in range(n_layers):
            self.hids.append([nn.Linear(n_hid, n_hid), nn.Tanh()])
        self.classifier = nn.Linear(n_hid, 3)

    def forward(self, x):
        for lin, act in self.hids:
            x = act(lin(x))
        return self.classifier(x)


net = SNLINet()
print(sum(p.numel() for p in net.parameters()))
