# GF210 positive: the `require_grad` typo (TorchFix TOR002). The backbone is
# meant to be frozen, but the flag is `requires_grad`: it keeps training.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(32, 64), nn.ReLU())
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.backbone(x))


model = Classifier()
for p in model.backbone.parameters():
    p.requires_grad = False
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 32), torch.randint(0, 10, (8,))) for _ in range(10)]

for x, y in loader:
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
