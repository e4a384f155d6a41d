import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)


def fit_batch(batch):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(net(batch[0]), batch[1])
    loss.backward()
    opt.step()
    return float(loss)


def run(n_epochs):
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    data = [(torch.randn(4, 6), torch.randint(0, 2, (4,))) for _ in range(3)]
    for ep in range(n_epochs):
        for batch in data:
            last = fit_batch(batch)
        sched.step()
        print(ep, last)


def run_resumed(n_epochs, start):
    # a local optimizer of the caller is not the one the helper steps
    opt = torch.optim.Adam(net.parameters())
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2)
    data = [(torch.randn(4, 6), torch.randint(0, 2, (4,))) for _ in range(3)]
    for ep in range(start, n_epochs):
        sched.step()
        for batch in data:
            fit_batch(batch)


def run_warm(n_epochs):
    # a warm-up pass steps the optimizer before the first scheduler step
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2)
    data = [(torch.randn(4, 6), torch.randint(0, 2, (4,))) for _ in range(3)]
    fit_batch(data[0])
    for ep in range(n_epochs):
        sched.step()
        for batch in data:
            fit_batch(batch)


run(4)
