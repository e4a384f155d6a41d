"""Source: https://github.com/yueatsprograms/uda_release/issues/3
Title: Correct learning rate
What went wrong: the adaptation script steps its MultiStepLR schedule as the first statement of
each epoch, before the per-epoch training helper runs any optimizer step; PyTorch warns that the
first value of the schedule is skipped, and the schedule is shifted by one epoch.
runs: trains; warns "Detected call of `lr_scheduler.step()` before `optimizer.step()`"
scope: documented
"""
import torch
import torch.nn as nn


def train(net, head, criterion, optimizer, loader):
    net.train()
    for inputs, labels in loader:
        optimizer.zero_grad()
        feats = net(inputs)
        loss = criterion(feats, labels) + head(feats.detach()).pow(2).mean()
        loss.backward()
        optimizer.step()


net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10))
head = nn.Linear(10, 4)
parameters = list(net.parameters()) + list(head.parameters())
optimizer = torch.optim.SGD(parameters, lr=0.1, momentum=0.9, weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, [2, 3], gamma=0.1, last_epoch=-1)
loader = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))) for _ in range(2)]
for epoch in range(1, 5):
    print("epoch %d lr=%.3f" % (epoch, optimizer.param_groups[0]["lr"]))
    scheduler.step()  # expect: GF203
    train(net, head, nn.CrossEntropyLoss(), optimizer, loader)
