# GF204 positive: the clear sets a skip flag, but the flag is reset before the step's test reads it, so after
# the clear the step still runs in the same iteration, on no gradients.
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Linear(6, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.05)
batches = [(torch.randn(4, 6), torch.randn(4, 1)) for _ in range(10)]

for x, y in batches:
    loss = F.mse_loss(net(x), y)
    loss.backward()
    hold = False
    if loss.item() > 10.0:
        hold = True
        opt.zero_grad()
    hold = False
    if not hold:
        opt.step()
    opt.zero_grad()
