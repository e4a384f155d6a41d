# GF101 positive, in-place method form (siamese-triplet issue #51 pattern):
# `output.pow(2)` saves `output`, so `output.div_(...)` invalidates it and
# backward raises. Rewrite: `output = output.div(...)`.
import torch
import torch.nn as nn


class EmbeddingNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.convnet = nn.Sequential(
            nn.Conv2d(1, 32, 5), nn.PReLU(), nn.MaxPool2d(2, stride=2),
            nn.Conv2d(32, 64, 5), nn.PReLU(), nn.MaxPool2d(2, stride=2),
        )
        self.fc = nn.Sequential(nn.Linear(64 * 4 * 4, 256), nn.PReLU(), nn.Linear(256, 2))

    def forward(self, x):
        output = self.convnet(x)
        output = output.view(output.size()[0], -1)
        return self.fc(output)


class EmbeddingNetL2(EmbeddingNet):
    def forward(self, x):
        output = super().forward(x)
        output.div_(output.pow(2).sum(1, keepdim=True).sqrt())
        return output
