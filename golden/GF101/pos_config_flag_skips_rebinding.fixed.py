# GF101 positive: a residual MLP block whose optional stages are switched by
# constructor flags. ELU(inplace=True) keeps its result for backward; when the
# block is built with neither the projection nor the gate, no `if` rebinds
# `hidden`, so the skip connection is added in place onto that saved result
# and backward() raises "modified by an inplace operation".
import torch
import torch.nn as nn


class GatedResidual(nn.Module):
    def __init__(self, size=12, project=False, gate=False):
        super().__init__()
        self.project = project
        self.gate = nn.Linear(size, size) if gate else None
        self.inner = nn.Linear(size, size)
        self.outer = nn.Linear(size, size)
        self.elu = nn.ELU(inplace=True)

    def forward(self, x):
        hidden = self.elu(self.inner(x))
        if self.project:
            hidden = self.outer(hidden)
        if self.gate is not None:
            hidden = hidden * torch.sigmoid(self.gate(x))
        hidden = hidden + x
        return hidden


block = GatedResidual()
opt = torch.optim.Adam(block.parameters(), lr=1e-3)
for _ in range(3):
    loss = block(torch.randn(5, 12)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
