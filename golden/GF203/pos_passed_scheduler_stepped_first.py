# GF203 positive: the per-epoch function receives its optimizer and scheduler
# as arguments and steps the scheduler as its very first statement, before the
# batch loop has made a single optimizer step. Both arguments come from the
# script's main block, the scheduler built on that optimizer, so the schedule
# starts one epoch late (PyTorch warns about the order).
import torch
import torch.nn as nn
import torch.nn.functional as F


def fit_one_epoch(net, batches, opt, sched):
    sched.step()
    net.train()
    for inputs, labels in batches:
        opt.zero_grad()
        loss = F.cross_entropy(net(inputs), labels)
        loss.backward()
        opt.step()


def main():
    net = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    batches = [(torch.randn(16, 20), torch.randint(0, 4, (16,))) for _ in range(5)]
    for _epoch in range(6):
        fit_one_epoch(net, batches, opt=opt, sched=sched)


if __name__ == "__main__":
    main()
