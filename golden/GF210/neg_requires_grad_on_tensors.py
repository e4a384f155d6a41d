# GF210 negative: `requires_grad = ...` on tensors and parameters (the real
# flag), on an attribute whose kind the file does not show, and on a class of
# the file that keeps and reads its own `requires_grad` attribute; parameters
# built through `torch.nn.parameter.Parameter`.
import torch
import torch.nn as nn
from torch.nn.parameter import Parameter


class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(100, 8)
        self.pos = nn.Parameter(torch.zeros(1, 16, 8))
        self.pos.requires_grad = False
        self.table.weight.requires_grad = False

    def forward(self, ids):
        return self.table(ids) + self.pos[:, : ids.shape[1]]


class Switchable(nn.Module):
    def __init__(self):
        super().__init__()
        self.requires_grad = True
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x) if self.requires_grad else self.lin(x).detach()


def freeze_all(model, pretrained):
    for p in model.parameters():
        p.requires_grad = False
    pretrained.encoder.requires_grad = False


gate = Switchable()
gate.requires_grad = False
scale = torch.ones(3)
scale.requires_grad = True


class LearnedScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = Parameter(torch.ones(1))
        self.offset = nn.parameter.Parameter(torch.zeros(1))

    def enable(self, on):
        self.scale.requires_grad = on
        self.offset.requires_grad = on
