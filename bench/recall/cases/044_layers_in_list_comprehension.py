"""Source: https://github.com/pytorch/pytorch/issues/666
Title: nn.Module not importing parameters contained in lists
What went wrong: a variable number of layers is kept in a plain Python list built with a
comprehension, so `parameters()` (and the optimizer) never see them.
runs: trains but the listed layers stay at their initial weights
scope: documented
"""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, num_layers):
        super().__init__()
        self.layer = nn.Linear(1, 1)
        self.list_of_layers = [nn.Linear(1, 1) for i in range(num_layers)]  # expect: GF304

    def forward(self, x):
        x = self.layer(x)
        for lin in self.list_of_layers:
            x = lin(x)
        return x


n = Net(4)
print(n)
opt = torch.optim.SGD(n.parameters(), lr=0.1)
opt.zero_grad()
n(torch.randn(8, 1)).pow(2).mean().backward()
opt.step()
