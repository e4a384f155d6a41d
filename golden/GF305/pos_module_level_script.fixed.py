# GF305 positive: a script that calls forward() on the model. With no hook
# registered the call computes the same; the verifier checks that and that a
# forward hook now runs.
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 16)
        self.fc2 = nn.Linear(16, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


model = Net()
x = torch.randn(8, 10)
logits = model(x)
print(logits.argmax(dim=1))
