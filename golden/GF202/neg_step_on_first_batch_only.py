# GF202 negative: the epoch scheduler is stepped inside the batch loop, but only on
# one batch of each epoch (`if i == 0:` / the last batch), so it runs once per epoch.
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
decay = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
warm = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
loader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(12)]

for epoch in range(30):
    for i, (x, y) in enumerate(loader):
        opt.zero_grad()
        F.mse_loss(net(x), y).backward()
        opt.step()
        if i == 0:
            decay.step()
        if i + 1 == len(loader) and epoch < 5:
            warm.step()
