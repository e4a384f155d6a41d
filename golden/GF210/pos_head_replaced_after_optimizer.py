# GF210 positive: the classifier head is replaced after the optimizer was
# built from model.parameters(): the new layer is not in the optimizer.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

model = torchvision.models.resnet18(weights=None)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
model.fc = nn.Linear(model.fc.in_features, 5)
loader = [(torch.randn(2, 3, 64, 64), torch.randint(0, 5, (2,))) for _ in range(10)]

for x, y in loader:
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
