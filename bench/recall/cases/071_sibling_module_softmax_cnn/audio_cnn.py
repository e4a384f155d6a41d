"""The model file of case 071 (see train.py there): a small spectrogram classifier whose
forward ends in an nn.Softmax module."""
from torch import nn


class SoundClassifier(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(1, 8, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.block2 = nn.Sequential(nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.flatten = nn.Flatten()
        self.dense = nn.Linear(16 * 4 * 4, n_classes)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, spectrogram):
        h = self.block1(spectrogram)
        h = self.block2(h)
        h = self.flatten(h)
        logits = self.dense(h)
        probabilities = self.softmax(logits)
        return probabilities
