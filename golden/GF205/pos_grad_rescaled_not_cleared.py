# GF205 positive: the loop rewrites `.grad` after backward, but with a rescaled copy
# of itself, not with zeros or None. The next backward adds into it, so each step
# still uses the (halved) sum of every past batch's gradient.
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Linear(8, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.05)
batches = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(10)]

for x, y in batches:
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    for p in net.parameters():
        p.grad = p.grad * 0.5
    opt.step()
