# GF203 positive: the per-epoch function steps the module-level MultiStepLR as its
# first statement, before its own batch loop steps the optimizer. The caller loops over
# epochs, so the first epoch already trains at the second value of the schedule
# (checked with torch: lr 1e-4 in epoch 0 instead of 1e-3, and PyTorch warns).
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
decay = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[10, 20], gamma=0.1)


def run_epoch(model, batches, ep):
    decay.step()
    model.train()
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("epoch", ep, "done")


if __name__ == "__main__":
    data = [(torch.randn(4, 8), torch.randint(0, 4, (4,))) for _ in range(3)]
    for epoch in range(30):
        run_epoch(net, data, epoch)
