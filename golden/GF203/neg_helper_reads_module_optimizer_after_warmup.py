import torch
import torch.nn as nn

net = nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2)
batches = [(torch.randn(3, 4), torch.randint(0, 2, (3,))) for _ in range(2)]


def one_pass():
    for x, y in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()


def evaluate():
    with torch.no_grad():
        return sum(nn.functional.cross_entropy(net(x), y).item() for x, y in batches)


# a warm-up pass steps the optimizer before the schedule's first step
one_pass()
for epoch in range(4):
    sched.step()
    one_pass()


def fit_local(epochs=3):
    opt = torch.optim.SGD(net.parameters(), lr=0.5)  # a local optimizer, not the one one_pass() steps
    local_sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)
    for epoch in range(epochs):
        local_sched.step()
        one_pass()
    return evaluate()
