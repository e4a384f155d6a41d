"""Source: https://github.com/Randl/MobileNetV2-pytorch/issues/5
Title: Duplicate log_softmax
What went wrong: the model's forward returns `F.log_softmax(x, dim=1)` while training uses
nn.CrossEntropyLoss, which applies log_softmax itself.
runs: trains (log_softmax is idempotent, so this one is redundant rather than wrong)
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MobileNetV2(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU6())
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        x = self.features(x).mean(dim=(2, 3))
        x = x.view(x.size(0), -1)
        x = self.fc(x)
        return F.log_softmax(x, dim=1)


model = MobileNetV2()
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for data, target in [(torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,)))]:
    output = model(data)
    loss = criterion(output, target)  # expect: GF308
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
