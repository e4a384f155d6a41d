"""Source: https://github.com/lenscloth/RKD/blob/master/run.py
Title: (held-out survey, bench/HELDOUT4B.md recall) metric-learning training script
What went wrong: the MultiStepLR schedule is built at module level and the per-epoch
`train(net, loader, ep)` function steps it as its first statement, before its batch loop
steps the optimizer; the script's epoch loop calls that function, so the first epoch
already trains at the schedule's second value.
runs: trains; PyTorch warns that lr_scheduler.step() ran before optimizer.step()
scope: extension (the scheduler step is first in a called per-epoch function)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

embed = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 8))
head = nn.Linear(8, 4)
params = list(embed.parameters()) + list(head.parameters())
optimizer = torch.optim.Adam(params, lr=1e-3, weight_decay=1e-5)
lr_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[2, 3], gamma=0.1)


def train(net, loader, ep):
    lr_scheduler.step()  # expect: GF203
    net.train()
    losses = []
    for images, labels in loader:
        loss = F.cross_entropy(head(net(images)), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    print(ep, sum(losses) / len(losses))


if __name__ == "__main__":
    data = [(torch.randn(6, 10), torch.randint(0, 4, (6,))) for _ in range(3)]
    for epoch in range(1, 5):
        train(embed, data, epoch)
