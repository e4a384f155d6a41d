# GF304 positive: tensors that require grad kept as attributes are not
# parameters (SimonThomine/RememberingNormality #7): the optimizer built from
# model.parameters() never updates them and state_dict does not save them.
import torch
import torch.nn as nn


class GatedResidual(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.alpha = nn.Parameter(torch.zeros(1))
        self.memory = nn.Parameter(torch.randn(6))

    def forward(self, x):
        return x + self.alpha * self.fc(x) + self.memory
