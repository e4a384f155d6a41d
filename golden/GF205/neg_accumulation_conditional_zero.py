# GF205 negative: gradient accumulation; the zero_grad runs under the same
# condition as the step.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]
accum = 4

for i, (x, y) in enumerate(loader):
    loss = F.mse_loss(model(x), y) / accum
    loss.backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
