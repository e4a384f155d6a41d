"""Source: https://github.com/pytorch/pytorch/issues/20124
Title: [FR] Warn if scheduler.step() is called but optim.step has not been called
What went wrong: the pattern the request describes, `for e in range(nepochs): scheduler.step();
train()`, was the documented order before PyTorch 1.1; with the changed semantics the schedule is
shifted by one epoch, silently, because `train()` only steps the optimizer afterwards.
runs: trains; PyTorch 2.13 warns "Detected call of `lr_scheduler.step()` before `optimizer.step()`" and epoch 0 runs at 0.01 instead of 0.1
scope: documented
"""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.1)
data = [(torch.randn(6, 10), torch.randint(0, 3, (6,))) for _ in range(4)]


def train():
    for x, y in data:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()


nepochs = 3
for e in range(nepochs):
    scheduler.step()  # expect: GF203
    train()
    print(e, optimizer.param_groups[0]["lr"])
