# GF212 negative: the step embeds an anchor batch under no_grad, but it also calls the trainer's own
# `embed` method with gradients on, and that method runs the same encoder: the encoder is trained.
import torch
import torch.nn as nn
import torch.nn.functional as F


class PairTrainer:
    def __init__(self):
        self.encoder = nn.Linear(12, 6)
        self.head = nn.Linear(6, 3)
        self.optimizer = torch.optim.SGD(list(self.encoder.parameters()) + list(self.head.parameters()), lr=0.1)

    def embed(self, x):
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
