# GF212 positive: the step embeds an anchor batch under no_grad, and the trainer's own `embed` method
# runs the encoder under no_grad too: the encoder, stepped by the optimizer, never gets a gradient.
import torch
import torch.nn as nn
import torch.nn.functional as F


class PairTrainer:
    def __init__(self):
        self.encoder = nn.Linear(12, 6)
        self.head = nn.Linear(6, 3)
        self.optimizer = torch.optim.SGD(list(self.encoder.parameters()) + list(self.head.parameters()), lr=0.1)

    def embed(self, x):
        with torch.no_grad():
            return torch.tanh(self.encoder(x))

    def step(self, x, y):
        with torch.no_grad():
            anchor = self.encoder(x)
        z = self.embed(x)
        loss = F.cross_entropy(self.head(z), y) + (z - anchor).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
