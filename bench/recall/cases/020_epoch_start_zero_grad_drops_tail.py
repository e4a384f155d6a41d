"""Source: https://github.com/ultralytics/ultralytics/pull/11217
Title: fix double zero_grad call messing up gradient accumulation
What went wrong: gradients are also cleared at the start of every epoch, so the backward
passes of the last batches of the previous epoch (not yet stepped) are discarded.
runs: trains but the trailing len(loader) % accumulate batches never contribute
scope: extension (zero_grad at epoch start, across the epoch boundary of an accumulation window)
"""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
accumulate = 4
train_loader = [(torch.randn(4, 10), torch.randn(4, 1)) for _ in range(10)]
last_opt_step = -1
nb = len(train_loader)

for epoch in range(3):
    optimizer.zero_grad()  # expect: GF204
    for i, (imgs, targets) in enumerate(train_loader):
        ni = i + nb * epoch
        loss = ((model(imgs) - targets) ** 2).mean()
        loss.backward()
        if ni - last_opt_step >= accumulate:
            optimizer.step()
            optimizer.zero_grad()
            last_opt_step = ni
