# GF308 positive: the encoder and the classifier are built in one tuple assignment; the
# classifier's Sequential ends in nn.Softmax, and its output goes to CrossEntropyLoss.
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 20)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Sequential(nn.Linear(20, 5), nn.Softmax(dim=1))

    def forward(self, h):
        return self.out(h)


def fit(batches):
    encoder, head = Encoder(), Head()
    opt = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
    ce = nn.CrossEntropyLoss()
    for x, y in batches:
        opt.zero_grad()
        scores = head(encoder(x))
        ce(scores, y).backward()
        opt.step()
