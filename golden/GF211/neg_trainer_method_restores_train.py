import torch
import torch.nn as nn


class Regressor:
    """The evaluation method hands the network back in train mode, and another method never touches it."""

    def __init__(self, width=10):
        self.net = nn.Sequential(nn.Linear(width, 20), nn.Dropout(0.2), nn.Linear(20, 1))
        self.opt = torch.optim.Adam(self.net.parameters(), lr=1e-3)
        self.history = []

    def evaluate(self, batches):
        self.net.eval()
        with torch.no_grad():
            total = sum(nn.functional.mse_loss(self.net(x), y).item() for x, y in batches)
        self.net.train()
        return total

    def log(self, value):
        self.history.append(value)

    def fit(self, batches, epochs=3):
        self.net.train()
        for epoch in range(epochs):
            for x, y in batches:
                loss = nn.functional.mse_loss(self.net(x), y)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            self.log(self.evaluate(batches))
