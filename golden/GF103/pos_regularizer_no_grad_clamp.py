# GF103 positive: the regulariser clamps the head's weight through `.data`
# after the forward pass and before backward. The fix removes the write (and
# the `with torch.no_grad():` block it leaves empty) and clamps
# `model.head.weight` right after `opt.step()` (projected gradient descent).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU())
        self.head = nn.Linear(64, 4)

    def forward(self, x):
        return self.head(self.body(x))


def l1_box_regularizer(m, tau=1e-4):
    with torch.no_grad():
        m.weight.data = torch.clamp(m.weight.data, -0.5, 0.5)
    return tau * m.weight.abs().sum()


model = Classifier()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
data = [(torch.randn(16, 32), torch.randint(0, 4, (16,))) for _ in range(50)]

for x, y in data:
    opt.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y) + l1_box_regularizer(model.head, 1e-4)
    loss.backward()
    opt.step()
