# GF306 positive: every layer of a stack is checkpointed through the module
# alias `cp`. With data input, no layer gets a gradient from the reentrant
# variant; with use_reentrant=False all of them do.
import torch
import torch.nn as nn
import torch.utils.checkpoint as cp


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = cp.checkpoint(layer, x)
        return x


model = Stack()
model(torch.randn(4, 8)).sum().backward()
