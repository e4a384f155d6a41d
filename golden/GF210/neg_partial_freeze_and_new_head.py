# GF210 negative: only the backbone is frozen (the rest trains), and a frozen
# model gets a new trainable head before the optimizer is built.
import torch
import torch.nn as nn
import torchvision

model = torchvision.models.resnet18(weights=None)
for p in model.layer1.parameters():
    p.requires_grad = False
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

frozen = torchvision.models.resnet18(weights=None)
frozen.requires_grad_(False)
frozen.fc = nn.Linear(512, 5)
head_optimizer = torch.optim.SGD(frozen.parameters(), lr=0.01)
