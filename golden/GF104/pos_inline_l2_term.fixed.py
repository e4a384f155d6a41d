# GF104 positive in the loop: `model.fc.weight.data.pow(2).sum()` is added to
# the loss, but `.data` cuts it out of the graph, so the penalty does nothing.
# The 1e-4 factor weights one term, not the whole loss (no GF201).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3)
        self.fc = nn.Linear(8 * 26 * 26, 10)

    def forward(self, x):
        return self.fc(torch.flatten(F.relu(self.conv(x)), 1))


model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(100):
    x, y = torch.randn(32, 1, 28, 28), torch.randint(0, 10, (32,))
    ce = F.cross_entropy(model(x), y)
    loss = ce + 1e-4 * model.fc.weight.pow(2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
