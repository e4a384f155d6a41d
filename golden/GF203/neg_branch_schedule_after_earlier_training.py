# GF203 negative: schedule steps inside a branch of the epoch loop that come after
# the same optimizer has already stepped. In the first loop the warm-up branch trains
# with `opt` too, so the `else:` step at the top of a later epoch follows a whole epoch
# of updates (the same as stepping at the end of the previous one). In the second, the
# optimizer trained before the loop began. In the third, the branch trains first and
# steps the schedule after.
import torch
import torch.nn as nn
import torch.nn.functional as F


def run_epoch(net, batches, opt):
    for x, y in batches:
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()


def fit(net, batches, epochs=6, warm=2):
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.8)
    for epoch in range(epochs):
        if epoch < warm:
            run_epoch(net, batches, opt)
        else:
            sched.step()
            run_epoch(net, batches, opt)


def fit_after_pretraining(net, batches, epochs=6, warm=2):
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.8)
    run_epoch(net, batches, opt)
    for epoch in range(epochs):
        if epoch >= warm:
            sched.step()
            run_epoch(net, batches, opt)


def fit_stepping_after(net, batches, epochs=6, warm=2):
    head_opt = torch.optim.SGD(net[2].parameters(), lr=0.05)
    full_opt = torch.optim.SGD(net.parameters(), lr=0.05)
    full_sched = torch.optim.lr_scheduler.ExponentialLR(full_opt, gamma=0.8)
    for epoch in range(epochs):
        if epoch < warm:
            run_epoch(net, batches, head_opt)
        else:
            run_epoch(net, batches, full_opt)
            full_sched.step()


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(7, 12), nn.ReLU(), nn.Linear(12, 4))
    data = [(torch.randn(3, 7), torch.randint(0, 4, (3,))) for _ in range(4)]
    fit(model, data)
    fit_after_pretraining(model, data)
    fit_stepping_after(model, data)
