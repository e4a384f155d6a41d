# GF203 positive without a fix: at the start of every epoch the scheduler is
# stepped in the `else:` of a plateau check, before that epoch's optimizer
# steps. The condition does not depend on the epoch, so the very first epoch
# already trains one schedule position ahead (lr 0.01 instead of 0.1 here).
# Moving a branch is left to the user.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import ReduceLROnPlateau

model = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[1, 20], gamma=0.1)
loader = [(torch.randn(8, 12), torch.randint(0, 3, (8,))) for _ in range(30)]
last_val = None

for epoch in range(40):
    if isinstance(scheduler, ReduceLROnPlateau):
        scheduler.step(last_val)
    else:
        scheduler.step()
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        last_val = sum(F.cross_entropy(model(x), y).item() for x, y in loader)
