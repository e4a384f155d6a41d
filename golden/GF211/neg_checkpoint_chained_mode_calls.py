# GF211 negative: every few batches the loop saves a CPU copy of the weights, switching
# the network to eval mode and to the CPU in one chained call, then back with
# `net.to(device).train()`. `Module.to()` (like `.cpu()` and `.cuda()`) returns the
# module itself, so the chained `.train()` restores train mode before the next batch.
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cpu")
net = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 2))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
batches = [(torch.randn(8, 10), torch.randint(0, 2, (8,))) for _ in range(12)]
snapshots = []

for epoch in range(3):
    net.train()
    for i, (x, y) in enumerate(batches):
        opt.zero_grad()
        F.cross_entropy(net(x.to(device)), y.to(device)).backward()
        opt.step()
        if (i + 1) % 5 == 0:
            net.eval().cpu()
            snapshots.append({k: v.clone() for k, v in net.state_dict().items()})
            net.to(device).train()
