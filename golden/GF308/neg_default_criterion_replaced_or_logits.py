# GF308 negative next to the default-criterion positive: one helper class is also built with
# another criterion (the default is not what every construction uses), and the other's model
# returns logits.
import torch
import torch.nn as nn


class Ranker(nn.Module):
    def __init__(self, features=12, choices=4):
        super().__init__()
        self.score = nn.Linear(features, choices)
        self.to_probs = nn.Softmax(dim=1)

    def forward(self, x):
        return self.to_probs(self.score(x))


class Logits(nn.Module):
    def __init__(self, features=12, choices=4):
        super().__init__()
        self.score = nn.Linear(features, choices)

    def forward(self, x):
        return self.score(x)


class Judge:
    def __init__(self, criterion=nn.CrossEntropyLoss()):
        self.criterion = criterion

    def loss(self, net, x, y):
        return self.criterion(net(x), y)


class Plain:
    def __init__(self, criterion=nn.CrossEntropyLoss()):
        self.criterion = criterion

    def loss(self, net, x, y):
        return self.criterion(net(x), y)


x, y = torch.randn(6, 12), torch.randint(0, 4, (6,))
a = Judge(nn.NLLLoss()).loss(Ranker(), x, y)
b = Judge().loss(Ranker(), x, y)
c = Plain().loss(Logits(), x, y)
(a + b + c).backward()
