# GF208 positive, assignment form, in a function: `running = running + loss`.
import torch.nn as nn


def train_epoch(model, loader, optimizer):
    criterion = nn.CrossEntropyLoss()
    running = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running = running + loss.detach()
    return running / len(loader)
