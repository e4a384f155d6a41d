# GF208 negative: a sum of per-chunk losses that IS backpropagated once: the
# graph is needed.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(16, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(32, 16), torch.randn(32, 4)) for _ in range(10)]

for x, y in loader:
    optimizer.zero_grad()
    total = 0
    for xc, yc in zip(x.chunk(4), y.chunk(4)):
        total += F.mse_loss(model(xc), yc)
    total.backward()
    optimizer.step()

for x, y in loader:
    optimizer.zero_grad()
    loss_sum = torch.zeros(())
    for xc, yc in zip(x.chunk(4), y.chunk(4)):
        chunk_loss = F.mse_loss(model(xc), yc)
        loss_sum = loss_sum + chunk_loss
    (loss_sum / 4).backward()
    optimizer.step()
