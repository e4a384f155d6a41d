# GF205 positive in a while loop over optimizer steps.
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.LBFGS(net.parameters()) if False else torch.optim.SGD(net.parameters(), lr=1e-2)
x = torch.linspace(-1, 1, 64).unsqueeze(1).repeat(1, 3)
target = x.sum(dim=1, keepdim=True) ** 2
step = 0
while step < 1000:
    loss = ((net(x) - target) ** 2).mean()
    loss.backward()
    opt.step()
    step += 1
