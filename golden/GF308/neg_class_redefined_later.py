"""A chapter-style script (a notebook exported cell by cell) that redefines `Net`: the first version returns
logits and is trained with CrossEntropyLoss; the later one ends in a softmax and is trained with log + NLLLoss.
At each training loop the class in force is the last definition above it, so both loops are correct."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 4)

    def forward(self, x):
        return self.fc(x)


model = Net()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(4):
    scores = model(torch.randn(16, 5))
    loss = criterion(scores, torch.randint(0, 4, (16,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 4)
        self.probs = nn.Softmax(dim=1)

    def forward(self, x):
        return self.probs(self.fc(x))


model = Net()
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(4):
    probs = model(torch.randn(16, 5))
    loss = criterion(torch.log(probs), torch.randint(0, 4, (16,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
