"""Source: https://github.com/microsoft/SpareNet/issues/12
Title: GPU memory leakage (CUDA out of memory after 2 epochs)
What went wrong: the runner feeds the loss tensors themselves (not their values) into
averaging meters for logging, so every iteration's graph stays referenced.
runs: trains but memory grows each iteration until out-of-memory
scope: extension (accumulation happens inside a meter method, not as `total += loss`)
"""
import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


net = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 3))
optimizer = torch.optim.Adam(net.parameters(), lr=1e-4)
losses = AverageMeter()
clouds = [torch.randn(16, 3) for _ in range(10)]

for epoch in range(2):
    for partial in clouds:
        optimizer.zero_grad()
        coarse = net(partial)
        loss = (coarse - partial).abs().mean()
        loss.backward()
        optimizer.step()
        losses.update(loss)  # expect: GF208
    print(epoch, losses.avg)
