"""Source: https://github.com/d2l-ai/d2l-en/pull/1623
Title: Include difference of net(X) and net.forward(X)
What went wrong: the book's examples run models as `net.forward(X)`, which skips everything
`nn.Module.__call__` does (forward pre-hooks, forward hooks, backward hooks); readers copying
it lose any hook they register.
runs: the hook registered on `net` never runs
scope: documented
"""
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(20, 256)
        self.out = nn.Linear(256, 10)

    def forward(self, X):
        return self.out(torch.relu(self.hidden(X)))


net = MLP()
calls = []
net.register_forward_hook(lambda module, inputs, output: calls.append(output.shape))
X = torch.rand(2, 20)
Y = net.forward(X)  # expect: GF305
print(Y.shape, "hook calls:", len(calls))
