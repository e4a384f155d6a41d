# GF104 positive: torchsample-style L1/L2 regularisers read `module.weight.data`;
# their results are added to the loss before backward, so the terms change the
# reported loss but contribute no gradient. Fix: drop `.data` (both reads).
import torch
import torch.nn as nn
import torch.nn.functional as F


def l1_regularizer(module, scale=1e-5):
    return scale * torch.sum(torch.abs(module.weight.data))


def l2_regularizer(module, scale=1e-4):
    return scale * torch.sum(torch.pow(module.weight.data, 2))


model = nn.Sequential(nn.Linear(20, 50), nn.ReLU(), nn.Linear(50, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loader = [(torch.randn(8, 20), torch.randint(0, 3, (8,))) for _ in range(10)]

for x, y in loader:
    opt.zero_grad()
    out = model(x)
    loss = F.cross_entropy(out, y)
    loss = loss + l1_regularizer(model[0]) + l2_regularizer(model[2])
    loss.backward()
    opt.step()
