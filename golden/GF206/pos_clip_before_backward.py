# GF206 positive: the loop clears the gradients, clips, and only then runs
# backward(). The clip sees the just-cleared gradients (None), so it does
# nothing; backward() then writes fresh, unclipped gradients and the step uses
# them as they are.
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(6, 24), nn.Tanh(), nn.Linear(24, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)

for it in range(20):
    x, y = torch.randn(32, 6), torch.randn(32, 1)
    opt.zero_grad()
    pred = net(x)
    loss = (pred - y).abs().mean()
    torch.nn.utils.clip_grad_value_(net.parameters(), 0.5)
    loss.backward()
    opt.step()
