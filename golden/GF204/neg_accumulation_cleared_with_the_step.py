# GF204 negative: gradient accumulation done right. The clear runs under the
# same condition as the step (or clears once per window, at its start); a
# generator trained every 5th batch runs its own backward under that condition,
# so clearing it every batch loses nothing; a step skipped on a non-finite loss
# is not accumulation, and dropping that batch's gradients is the point.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
gen = nn.Linear(4, 10)
opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4)
loader = [(torch.randn(8, 10), torch.randint(0, 2, (8,))) for _ in range(16)]
k = 4

for epoch in range(3):
    for i, (x, y) in enumerate(loader):
        (F.cross_entropy(model(x), y) / k).backward()
        if (i + 1) % k == 0:
            opt.step()
            opt.zero_grad()

for epoch in range(3):
    for i, (x, y) in enumerate(loader):
        if i % k == 0:
            opt.zero_grad()
        (F.cross_entropy(model(x), y) / k).backward()
        if (i + 1) % k == 0:
            opt.step()

for epoch in range(3):
    for i, (x, y) in enumerate(loader):
        opt_g.zero_grad()
        if i % 5 == 0:
            fake = gen(torch.randn(8, 4))
            F.cross_entropy(model(fake), y).backward()
            opt_g.step()

for epoch in range(3):
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        if torch.isfinite(loss):
            opt.step()
        opt.zero_grad()
