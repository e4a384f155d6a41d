"""Source: https://github.com/michuanhaohao/reid-strong-baseline/issues/190
Title: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`
What went wrong: the multi-step schedule was advanced when each epoch *started* (an ignite
EPOCH_STARTED handler), before that epoch's optimizer steps; the fix moves it to epoch end.
runs: trains but warns and the LR drops one epoch early
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[40, 70], gamma=0.1)
loader = [(torch.randn(16, 64), torch.randint(0, 10, (16,))) for _ in range(5)]

for epoch in range(3):
    scheduler.step()  # expect: GF203
    for feats, pids in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(feats), pids)
        loss.backward()
        optimizer.step()
