# GF204 negative: accumulation written so that nothing is lost. The clear runs
# once before the micro-batch loop; per-task gradients cleared on each pass are
# copied out and combined by hand before the step; the epoch-start clear is
# harmless when the window test also steps the epoch's last batch, or when the
# remainder is stepped after the batch loop.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(12, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.02)
k = 3
loader = [(torch.randn(4, 12), torch.randint(0, 3, (4,))) for _ in range(10)]

for x, y in loader:
    optimizer.zero_grad()
    for xs, ys in zip(x.chunk(2), y.chunk(2)):
        (F.cross_entropy(model(xs), ys) / 2).backward()
    optimizer.step()

for x, y in loader:
    per_task = []
    for xs, ys in zip(x.chunk(2), y.chunk(2)):
        optimizer.zero_grad()
        F.cross_entropy(model(xs), ys).backward()
        per_task.append([p.grad.clone() for p in model.parameters()])
    for p, *gs in zip(model.parameters(), *per_task):
        p.grad = torch.stack(gs).mean(0)
    optimizer.step()

for epoch in range(2):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(loader):
        (F.cross_entropy(model(x), y) / k).backward()
        if (i + 1) % k == 0 or i + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()

for epoch in range(2):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(loader):
        (F.cross_entropy(model(x), y) / k).backward()
        if (i + 1) % k == 0:
            optimizer.step()
            optimizer.zero_grad()
    optimizer.step()
