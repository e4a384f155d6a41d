"""A `.data` clamp inside the loss (between forward and backward) that binds: the step's gradient was taken at
other weights than the ones it updates."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 1))
with torch.no_grad():
    model[2].weight.mul_(8.0)  # start outside the box so that the clamp binds


def regularizer(m, tau=1e-3):
    with torch.no_grad():
        m.weight.data = torch.clamp(m.weight.data, -1.0, 1.0)
    return tau * m.weight.abs().mean()


opt = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(5):
    x, y = torch.randn(8, 6), torch.randn(8, 1)
    opt.zero_grad()
    out = model(x)
    loss = (out - y).pow(2).mean() + regularizer(model[2])
    loss.backward()
    opt.step()
