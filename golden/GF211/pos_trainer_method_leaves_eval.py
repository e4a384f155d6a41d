import torch
import torch.nn as nn


class Classifier:
    """A trainer object: its scoring method switches the network to eval mode and never back."""

    def __init__(self, width=24, classes=5):
        self.net = nn.Sequential(nn.Linear(width, 48), nn.BatchNorm1d(48), nn.ReLU(), nn.Linear(48, classes))
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1, momentum=0.9)

    def score(self, batches):
        self.net.eval()
        correct = 0
        with torch.no_grad():
            for x, y in batches:
                correct += (self.net(x).argmax(1) == y).sum().item()
        return correct

    def fit(self, batches, epochs=4):
        self.net.train()
        for epoch in range(epochs):
            for x, y in batches:
                loss = nn.functional.cross_entropy(self.net(x), y)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            print(epoch, self.score(batches))
