# GF203 negative: epoch-start scheduler steps guarded by a condition on the
# epoch. Skipping the first epoch (`if epoch > 0:`, the `else:` of
# `if epoch == start_epoch:`) makes a start-of-epoch step the same as one at the
# end of the previous epoch; a resumed run that fast-forwards the schedule and
# `continue`s trains no batch in that epoch.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(6, 2)
loader = [(torch.randn(4, 6), torch.randn(4, 2)) for _ in range(10)]
opt_a = torch.optim.SGD(model.parameters(), lr=0.1)
sched_a = torch.optim.lr_scheduler.StepLR(opt_a, step_size=10, gamma=0.5)
opt_b = torch.optim.SGD(model.parameters(), lr=0.1)
sched_b = torch.optim.lr_scheduler.StepLR(opt_b, step_size=10, gamma=0.5)
opt_c = torch.optim.SGD(model.parameters(), lr=0.1)
sched_c = torch.optim.lr_scheduler.StepLR(opt_c, step_size=10, gamma=0.5)
start_epoch = 3
fast_forward_schedule = False

for epoch in range(30):
    if epoch > 0:
        sched_a.step()
    for x, y in loader:
        opt_a.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt_a.step()

for epoch in range(start_epoch, 30):
    if epoch == start_epoch:
        print("resuming")
    else:
        sched_b.step()
    for x, y in loader:
        opt_b.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt_b.step()

for epoch in range(30):
    if fast_forward_schedule:
        sched_c.step()
        continue
    for x, y in loader:
        opt_c.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt_c.step()
