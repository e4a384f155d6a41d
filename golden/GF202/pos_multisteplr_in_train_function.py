# GF202 positive inside a function: MultiStepLR(milestones=[30, 80]) is built
# and stepped in `train`, once per batch. The milestones are epochs, so the
# learning rate drops twice within the first epoch of 100 batches.
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import MultiStepLR


def train(model: nn.Module, loader, epochs=100):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    scheduler = MultiStepLR(optimizer, milestones=[30, 80], gamma=0.1)
    for epoch in range(epochs):
        model.train()
        for images, labels in loader:
            optimizer.zero_grad()
            outputs = model(images)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            scheduler.step()  # MultiStepLR decay
        print(epoch, loss.item())
