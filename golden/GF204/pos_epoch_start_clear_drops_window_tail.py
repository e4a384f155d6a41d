# GF204 positive without a fix: gradients accumulate over windows of
# `accum_every` batches, and the window's own clear follows its step. The extra
# clear at the top of each epoch discards the batches after the epoch's last
# full window (their backward ran, no step used them) whenever the epoch length
# is not a multiple of the window.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(12, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.02)
accum_every = 3
loader = [(torch.randn(4, 12), torch.randint(0, 3, (4,))) for _ in range(10)]

for epoch in range(4):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y) / accum_every
        loss.backward()
        if (i + 1) % accum_every == 0:
            optimizer.step()
            optimizer.zero_grad()
