# GF304 negative: nn.ModuleList / nn.ModuleDict / nn.ParameterList / nn.Parameter
# register what they hold.
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 1)})
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(4))])
        self.alpha = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x) * self.scales[0] + self.alpha
        return self.heads["a"](x)
