# GF203 negative: the scheduler steps in the `else` branch, exclusive with the
# branch that steps the optimizer (a skipped, non-finite batch still advances
# the schedule); no iteration runs the scheduler before the optimizer.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 1)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=20)

for x, y in loader:
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    if not torch.isfinite(loss):
        scheduler.step()
    else:
        optimizer.step()
        scheduler.step()
