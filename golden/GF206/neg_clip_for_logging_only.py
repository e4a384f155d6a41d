# GF206 negative: `clip_grad_norm_` with max_norm=inf only computes the norm
# for logging; where it runs does not matter for the update.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]
norms = []

for x, y in loader:
    optimizer.zero_grad()
    F.mse_loss(model(x), y).backward()
    optimizer.step()
    norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf")))
    norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=math.inf))
