# GF210 positive (detect only): `requires_grad = False` written on modules. An
# nn.Module has no such flag: the assignment creates a plain attribute, and the
# parameters inside keep requires_grad=True, so the "frozen" layers still train.
# `module.requires_grad_(False)` is the call that freezes them.
import torch
import torch.nn as nn
import torchvision


class Segmenter(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.classifier = nn.Conv2d(16, 5, 1)

    def forward(self, x):
        return self.classifier(torch.relu(self.stem(x)))


class Finetuner:
    def __init__(self, freeze_stem=True):
        self.net = Segmenter()
        self.net.stem.requires_grad = not freeze_stem
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.01)


backbone = torchvision.models.resnet18()
backbone.layer1.requires_grad = False
head = nn.Linear(512, 10)
head.requires_grad = False
