"""Source: https://github.com/twitter/the-algorithm-ml/pull/136
Title: Swap python list for torch's ModuleList
What went wrong: an MLP builder keeps its hidden Linear layers in a plain Python list filled in a
loop, so `parameters()` does not see them: the optimizer never updates them and `.to(device)`
does not move them.
runs: trains only the registered output layer; the list's layers keep their initial weights
scope: documented
"""
import torch
import torch.nn as nn


class Mlp(nn.Module):
    def __init__(self, in_features, layer_sizes, out_features):
        super().__init__()
        self.layers = []  # expect: GF304
        prev = in_features
        for size in layer_sizes:
            self.layers.append(nn.Linear(prev, size))
            prev = size
        self.head = nn.Linear(prev, out_features)

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return self.head(x)


model = Mlp(10, [16, 16], 1)
print(len(list(model.parameters())))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss = model(torch.randn(8, 10)).pow(2).mean()
loss.backward()
optimizer.step()
