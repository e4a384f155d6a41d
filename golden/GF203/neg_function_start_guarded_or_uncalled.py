# GF203 negative: two per-epoch functions that step the schedule before their batch loop,
# neither a hazard gradfix can show. `train_after_first` steps only when its epoch
# argument is past the first one, the idiom that equals stepping at the end of the
# previous epoch. `train_unused` is never called in the project, so how it is called
# (once per epoch, or after a warm-up that already stepped the optimizer) is unknown.
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Linear(8, 4)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)


def train_after_first(batches, ep):
    if ep > 0:
        schedule.step()
    for x, y in batches:
        optimizer.zero_grad()
        F.cross_entropy(net(x), y).backward()
        optimizer.step()


def train_unused(batches):
    schedule.step()
    for x, y in batches:
        optimizer.zero_grad()
        F.cross_entropy(net(x), y).backward()
        optimizer.step()


if __name__ == "__main__":
    data = [(torch.randn(4, 8), torch.randint(0, 4, (4,))) for _ in range(3)]
    for epoch in range(10):
        train_after_first(data, epoch)
