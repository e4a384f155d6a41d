import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)


def fit_batch(batch, optim):
    optim.zero_grad()
    out = net(batch[0])
    loss = nn.functional.cross_entropy(out, batch[1])
    loss.backward()
    optim.step()
    return float(loss)


def run(n_epochs):
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    data = [(torch.randn(4, 6), torch.randint(0, 2, (4,))) for _ in range(3)]
    for ep in range(n_epochs):
        sched.step()
        for batch in data:
            last = fit_batch(batch, opt)
        print(ep, last)


run(4)
