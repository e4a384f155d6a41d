# GF104 negative: the regularisers use the parameter itself (torchsample's
# later fix and the seed's solution form), so the terms are in the graph.
import torch
import torch.nn as nn
import torch.nn.functional as F


def l1_regularizer(module, scale=1e-5):
    return scale * torch.sum(torch.abs(module.weight))


def l2_sp_regularizer(m, tau=1e-4):
    return tau * m.weight.abs().mean()


model = nn.Sequential(nn.Linear(20, 50), nn.ReLU(), nn.Linear(50, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for x, y in [(torch.randn(8, 20), torch.randint(0, 3, (8,))) for _ in range(10)]:
    out = model(x)
    loss = F.cross_entropy(out, y) + l1_regularizer(model[0]) + l2_sp_regularizer(model[2])
    opt.zero_grad()
    loss.backward()
    opt.step()
