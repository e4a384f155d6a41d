"""Source: https://github.com/liuzechun/ReActNet/issues/32
Title: I see scheduler.step() is being invoked right before the for loop in the train function or before training for one epoch
What went wrong: the per-epoch `train()` function steps the learning-rate scheduler first,
before its batch loop runs any optimizer step, so the schedule is shifted by one epoch (and
PyTorch warns that the first value is skipped).
runs: trains; warns "Detected call of `lr_scheduler.step()` before `optimizer.step()`" and each epoch uses the next epoch's rate
scope: documented
"""
import torch
import torch.nn as nn


def train(epoch, loader, model, criterion, optimizer, scheduler):
    scheduler.step()  # expect: GF203
    model.train()
    for images, target in loader:
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    epochs = 4
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 - step / epochs)
    loader = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))) for _ in range(3)]
    for epoch in range(epochs):
        train(epoch, loader, model, nn.CrossEntropyLoss(), optimizer, scheduler)
