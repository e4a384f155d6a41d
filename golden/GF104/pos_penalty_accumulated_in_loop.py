# GF104 positive: an L2 penalty summed in a loop over the parameters, through
# `.data`. The penalty is a constant to autograd, so weight decay silently does
# nothing. Dropping `.data` gives the penalty its gradient.
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 3))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for x, y in [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(4)]:
    opt.zero_grad()
    loss = F.cross_entropy(net(x), y)
    penalty = 0.0
    for w in net.parameters():
        penalty += w.data.pow(2).sum()
    loss = loss + 1e-3 * penalty
    loss.backward()
    opt.step()
