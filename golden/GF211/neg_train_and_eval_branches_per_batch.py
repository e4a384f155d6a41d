# GF211 negative: one pass helper serves both training and evaluation. The flag is
# fixed for a call; inside the batch loop the training branch switches the network to
# train mode right before its own forward, and the other branch switches it to eval
# mode for a no-grad forward. No batch that steps the optimizer runs in eval mode.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Runner:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))
        self.opt = torch.optim.Adam(self.net.parameters(), lr=1e-3)

    def one_pass(self, batches, training):
        total = 0.0
        for inputs, labels in batches:
            if training:
                self.net.train(True)
                scores = self.net(inputs)
                loss = F.cross_entropy(scores, labels)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            else:
                self.net.train(False)
                with torch.no_grad():
                    scores = self.net(inputs)
                    loss = F.cross_entropy(scores, labels)
            total += loss.item()
        return total


runner = Runner()
data = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(5)]
for epoch in range(3):
    runner.one_pass(data, training=True)
    runner.one_pass(data, training=False)
