# GF201 negative: non-literal divisors on the whole loss: gradient
# accumulation (`/ accum_steps`), `/ len(loader)` and `/ x.size(0)`.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(128, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = [(torch.randn(8, 128), torch.randint(0, 2, (8,))) for _ in range(64)]
accum_steps = 8

for step, (x, y) in enumerate(loader):
    loss = F.cross_entropy(model(x), y)
    loss = loss / accum_steps
    loss.backward()
    if (step + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()

optimizer.zero_grad()
for x, y in loader:
    batch_loss = F.cross_entropy(model(x), y, reduction="sum") / x.size(0) / len(loader)
    batch_loss.backward()
optimizer.step()
