"""Source: https://github.com/Lyken17/pytorch-memonger/issues/4
Title: None of the inputs have requires_grad=True. Gradients will be None
What went wrong: the memory-saving wrapper checkpoints each ResNet stage with the default
(reentrant) checkpoint; the first stage's input is the image batch, which does not require
grad, so that stage's parameters get no gradient and the warning appears.
runs: warns "None of the inputs have requires_grad=True"; neither `stem` nor `layer1` gets a gradient
scope: documented
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class CheckpointedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.layer1 = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        out = checkpoint(self.stem, x)  # expect: GF306
        out = checkpoint(self.layer1, out)
        return self.fc(out.mean(dim=(2, 3)))


if __name__ == "__main__":
    net = CheckpointedNet()
    loss = nn.functional.cross_entropy(net(torch.randn(2, 3, 8, 8)), torch.tensor([1, 2]))
    loss.backward()
    print("stem grad:", net.stem[0].weight.grad)
