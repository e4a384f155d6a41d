# GF209 positive without a fix: an out-of-place op on an activation inside
# forward, and a tensor conversion whose result is dropped. In place would
# risk GF101 (the tensor may be saved for backward), and a conversion has no
# in-place form: assign the result.
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor):
        h = self.fc(x)
        h.add(1.0)
        return torch.sigmoid(h)


def prepare(batch: torch.Tensor, device):
    batch.to(device)
    return batch
