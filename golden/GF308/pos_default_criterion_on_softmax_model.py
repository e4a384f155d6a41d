# GF308 positive: a helper class keeps the criterion it is given, CrossEntropyLoss by default,
# and every construction in the file leaves that default; the model handed to its method ends
# in nn.Softmax, so cross_entropy receives probabilities.
import torch
import torch.nn as nn


class Ranker(nn.Module):
    def __init__(self, features=12, choices=4):
        super().__init__()
        self.score = nn.Linear(features, choices)
        self.to_probs = nn.Softmax(dim=1)

    def forward(self, x):
        return self.to_probs(self.score(x))


class Judge:
    def __init__(self, criterion=nn.CrossEntropyLoss(), weight=1.0):
        self.criterion = criterion
        self.weight = weight

    def loss(self, net, x, y):
        probs = net(x)
        return self.weight * self.criterion(probs, y)


ranker = Ranker()
opt = torch.optim.SGD(ranker.parameters(), lr=0.1)
value = Judge(weight=0.5).loss(ranker, torch.randn(6, 12), torch.randint(0, 4, (6,)))
value.backward()
opt.step()
