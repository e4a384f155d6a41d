# GF211 positive: a trainer class validates at the end of each epoch with
# self.model.eval() and never calls self.model.train() again.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model: nn.Module, lr: float = 1e-3):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters(), lr=lr)

    def fit(self, train_loader, val_loader, epochs: int):
        history = []
        for epoch in range(epochs):
            for x, y in train_loader:
                self.opt.zero_grad()
                loss = F.cross_entropy(self.model(x), y)
                loss.backward()
                self.opt.step()
            self.model.eval()
            with torch.no_grad():
                losses = [F.cross_entropy(self.model(x), y).item() for x, y in val_loader]
            history.append(sum(losses) / len(losses))
        return history
