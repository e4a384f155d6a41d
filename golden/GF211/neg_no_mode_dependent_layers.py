# GF211 negative: the model has no dropout or batch norm, so eval and train
# mode compute the same thing.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(64, 2)

    def forward(self, x):
        return self.fc2(self.act(F.relu(self.fc1(x))))


def fit(train_loader, val_loader, epochs=10):
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in train_loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            val = sum(F.cross_entropy(model(x), y).item() for x, y in val_loader)
        print(epoch, val)
    return model
