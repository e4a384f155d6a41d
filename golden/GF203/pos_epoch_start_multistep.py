# GF203 positive: the pre-1.1 idiom. MultiStepLR is stepped at the start of
# every epoch, before that epoch's optimizer steps, so the first epoch already
# runs one schedule position ahead. The fix steps it at the end of the epoch.
import torch
import torch.nn as nn


def train(model: nn.Module, loader, epochs=90):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[1, 60], gamma=0.1)
    for epoch in range(epochs):
        scheduler.step()
        model.train()
        for images, targets in loader:
            optimizer.zero_grad()
            loss = criterion(model(images), targets)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: lr {optimizer.param_groups[0]['lr']}")
