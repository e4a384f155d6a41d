# GF210 positive: the optimizer is built over the encoder's parameters, and
# the very next loop freezes them all, before any training. The optimizer is
# left with nothing that gets a gradient (meant: freeze the encoder and train
# the head, so the optimizer should have been given `model.head`).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(30, 64), nn.ReLU())
        self.head = nn.Linear(64, 4)

    def forward(self, x):
        return self.head(self.encoder(x))


model = Classifier()
optimizer = torch.optim.Adam(model.encoder.parameters(), lr=1e-3)
for p in model.encoder.parameters():
    p.requires_grad = False
loader = [(torch.randn(16, 30), torch.randint(0, 4, (16,))) for _ in range(10)]

for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()


def finetune(net, batches):
    opt = torch.optim.SGD(net.encoder.parameters(), lr=0.01, momentum=0.9)
    net.encoder.requires_grad_(False)
    for x, y in batches:
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
