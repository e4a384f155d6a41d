"""Healthy: a small CNN with batch norm and dropout on synthetic 3x16x16 images, SGD with momentum, a DataLoader,
StepLR stepped once per epoch, validation in eval mode and back to train mode."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(16 * 4 * 4, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(self.drop(torch.flatten(x, 1)))


model = ConvNet()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
train = DataLoader(TensorDataset(torch.randn(48, 3, 16, 16), torch.randint(0, 5, (48,))), batch_size=16, shuffle=True)
val = DataLoader(TensorDataset(torch.randn(16, 3, 16, 16), torch.randint(0, 5, (16,))), batch_size=16)
for epoch in range(3):
    model.train()
    for x, y in train:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    sched.step()
    model.eval()
    with torch.no_grad():
        correct = sum((model(x).argmax(1) == y).sum().item() for x, y in val)
