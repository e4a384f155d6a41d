"""`Net` is redefined to end in a softmax, and the loop after the redefinition still uses CrossEntropyLoss:
the class in force there is the softmax one, so the loss gets probabilities."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 4)

    def forward(self, x):
        return self.fc(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 4)
        self.probs = nn.Softmax(dim=1)

    def forward(self, x):
        return self.probs(self.fc(x))


model = Net()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(4):
    scores = model(torch.randn(16, 5))
    loss = criterion(scores, torch.randint(0, 4, (16,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
