"""Continual learning: before each new task, a warm-up trains only the newest classifier head, with an optimizer
over that head's parameters alone. Each warm-up epoch puts the head in train mode; the backbone is a fixed
feature extractor there, and the epoch ends with an evaluation pass in eval mode. The part being trained is in
train mode in every epoch, so nothing trains in eval mode."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU())
        self.heads = nn.ModuleList()

    def add_head(self, classes):
        self.heads.append(nn.Sequential(nn.Dropout(0.2), nn.Linear(32, classes)))

    def forward(self, x):
        h = self.backbone(x)
        return [head(h) for head in self.heads]


class Learner:
    def __init__(self, model, warmup_epochs=3, warmup_lr=0.05):
        self.model = model
        self.warmup_epochs = warmup_epochs
        self.warmup_lr = warmup_lr

    def warm_up(self, task, loader):
        self.optimizer = torch.optim.SGD(self.model.heads[-1].parameters(), lr=self.warmup_lr)
        for epoch in range(self.warmup_epochs):
            self.model.heads[-1].train()
            for x, y in loader:
                outputs = self.model(x)
                loss = F.cross_entropy(outputs[task], y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            with torch.no_grad():
                self.model.eval()
                hits = sum((self.model(x)[task].argmax(1) == y).sum().item() for x, y in loader)
            print(epoch, hits)


net = MultiHeadNet()
net.add_head(4)
net.add_head(3)
Learner(net).warm_up(1, [(torch.randn(6, 10), torch.randint(0, 3, (6,))) for _ in range(3)])
