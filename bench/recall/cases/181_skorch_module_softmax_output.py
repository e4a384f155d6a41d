"""Source: https://github.com/Yard1/ray-skorch/pull/18
Title: Remove softmax from output
What went wrong: the example classifier module returns `softmax` of its output layer while the
training uses `CrossEntropyLoss`, which expects logits and applies log-softmax itself.
runs: trains; the loss is computed on probabilities, so learning is slow
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ClassifierModule(nn.Module):
    def __init__(self, num_units=10, nonlin=F.relu):
        super().__init__()
        self.dense0 = nn.Linear(20, num_units)
        self.nonlin = nonlin
        self.output = nn.Linear(num_units, 2)

    def forward(self, X):
        X = self.nonlin(self.dense0(X))
        return F.softmax(self.output(X), dim=-1)


module = ClassifierModule()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
X, y = torch.randn(16, 20), torch.randint(0, 2, (16,))
for _ in range(3):
    optimizer.zero_grad()
    loss = criterion(module(X), y)  # expect: GF308
    loss.backward()
    optimizer.step()
