# GF203 negative: gradients are accumulated over micro-batches in an inner loop and the
# optimizer steps once after it; the schedule is stepped after that step, in the right
# order. A second loop steps its schedule only from the second pass on (`if rnd > 0:`),
# which equals stepping at the end of the previous pass.
import torch
import torch.nn as nn

model = nn.Linear(6, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
batches = [torch.randn(8, 6) for _ in range(3)]

for x in batches:
    opt.zero_grad()
    for chunk in x.chunk(4):
        model(chunk).pow(2).mean().backward()
    opt.step()
    sched.step()

for rnd in range(3):
    if rnd > 0:
        sched.step()
    opt.zero_grad()
    for chunk in batches[rnd].chunk(2):
        model(chunk).pow(2).mean().backward()
    opt.step()
