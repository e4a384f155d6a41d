"""Source: https://github.com/wkentaro/pytorch-fcn/pull/56
Title: Return to train mode after validation
What went wrong: the trainer validates every `interval_validate` iterations from inside the
iteration loop; `validate()` switches the model to eval mode and nothing switches it back until
the next epoch, so the rest of the epoch trains with dropout off and batch norm frozen.
runs: trains; after the first validation `model.training` is False for the remaining iterations (the run prints it)
scope: extension
"""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, optimizer, train_loader, val_loader, interval_validate=3):
        self.model = model
        self.optim = optimizer
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.interval_validate = interval_validate
        self.iteration = 0

    def validate(self):
        self.model.eval()
        with torch.no_grad():
            return sum(nn.functional.cross_entropy(self.model(x), y).item() for x, y in self.val_loader)

    def train_epoch(self):
        self.model.train()
        for x, y in self.train_loader:
            if self.iteration % self.interval_validate == 0:
                self.validate()  # expect: GF211
            self.optim.zero_grad()
            loss = nn.functional.cross_entropy(self.model(x), y)
            loss.backward()
            self.optim.step()
            self.iteration += 1
            print(self.iteration, self.model.training)


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Dropout2d(0.5), nn.Conv2d(8, 4, 1))
data = [(torch.randn(2, 3, 8, 8), torch.randint(0, 4, (2, 8, 8))) for _ in range(5)]
trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=1e-3), data, data[:2])
trainer.train_epoch()
