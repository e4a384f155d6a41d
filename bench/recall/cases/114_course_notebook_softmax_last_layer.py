"""Source: https://github.com/MicrosoftDocs/ml-basics/issues/48
Title: The torch deep learning model should not use softmax last layer + CrossEntropyLoss
What went wrong: a course notebook's classifier returns `softmax` of its last layer and is
trained with CrossEntropyLoss, which expects logits; the maintainers fixed the notebook.
runs: trains; the loss works on probabilities, so learning is slowed
scope: documented
"""
import torch
import torch.nn as nn


class PenguinNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 10)
        self.fc2 = nn.Linear(10, 10)
        self.fc3 = nn.Linear(10, 3)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return torch.softmax(self.fc3(x), dim=1)


model = PenguinNet()
loss_criteria = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
features, labels = torch.randn(32, 4), torch.randint(0, 3, (32,))

for epoch in range(20):
    optimizer.zero_grad()
    out = model(features)
    loss = loss_criteria(out, labels)  # expect: GF308
    loss.backward()
    optimizer.step()
