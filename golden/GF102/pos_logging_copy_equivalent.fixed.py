# GF102 positive whose fix is `equivalent`: the detached copy is only kept for
# a histogram, and the later in-place `+=` on the source changes that logged
# copy too (it holds the shifted values). Nothing in the computation reads the
# copy, so the clone changes what is logged and nothing autograd sees.
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 8)
        self.last_features = None

    def forward(self, x):
        f = self.fc(x)
        self.last_features = f.detach().clone()  # for a TensorBoard histogram
        f += 1.0
        return torch.tanh(f)
