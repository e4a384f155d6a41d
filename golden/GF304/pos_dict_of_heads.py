# GF304 positive: task heads in a plain dict (string keys, so nn.ModuleDict).
import torch
import torch.nn as nn


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(12, 16)
        self.heads = {"cls": nn.Linear(16, 10), "box": nn.Linear(16, 4)}

    def forward(self, x):
        f = torch.relu(self.backbone(x))
        return {name: head(f) for name, head in self.heads.items()}
