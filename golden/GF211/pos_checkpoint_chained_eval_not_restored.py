# GF211 positive: the same checkpointing, but the network comes back with
# `net.to(device)` alone: the chained `eval()` before the save leaves it in eval mode,
# so the batches after the first checkpoint train with dropout off and frozen
# batch-norm statistics.
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
            net.to(device)
