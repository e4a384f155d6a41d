# GF304 negative: a list of parameter-free modules holds nothing to train or
# save; buffers and constant tensors are not meant to be parameters.
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.acts = [nn.ReLU(), nn.Tanh()]
        self.fc = nn.Linear(4, 4)
        self.register_buffer("mask", torch.ones(4))
        self.eps = torch.tensor(1e-6)
        self.frozen = torch.randn(4, requires_grad=False)

    def forward(self, x):
        return self.acts[0](self.fc(x)) * self.mask + self.eps
