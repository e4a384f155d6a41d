# GF206 positive with clip_grad_value_: the value clip after the step bounds
# nothing. The fix moves it, with its comment, before the step.
import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_value_

net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.RMSprop(net.parameters(), lr=1e-3)
data = [(torch.randn(16, 8), torch.randn(16, 1)) for _ in range(10)]
log = []

for x, y in data:
    opt.zero_grad()
    loss = nn.functional.smooth_l1_loss(net(x), y)
    loss.backward()
    opt.step()
    # keep the updates bounded
    clip_grad_value_(net.parameters(), clip_value=0.1)
    log.append(loss.item())
