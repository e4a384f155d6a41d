# GF211 positive: an evaluate() helper of this file puts the model in eval mode
# and does not restore it; it runs every fifth epoch, so the epochs after one of
# those train a resnet with batch norm frozen in eval mode.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.models import resnet18


def evaluate(net, loader):
    net.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (net(x).argmax(1) == y).sum().item()
    return correct / len(loader.dataset)


def train(train_loader, val_loader, epochs):
    model = resnet18(num_classes=10)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for images, labels in train_loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
        if epoch % 5 == 0:
            acc = evaluate(model, val_loader)
            print(f"epoch {epoch}: {acc:.3f}")
