# GF304 negative: a dict of candidate encoders used as a lookup table. The chosen
# one is kept in its own attribute (registered there), directly or through a
# helper; registering the table would add the unused candidate and save the
# chosen one under a second state_dict key.
import torch.nn as nn


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        return self.fc(x)


class Large(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 8))

    def forward(self, x):
        return self.fc(x)


class Picker(nn.Module):
    def __init__(self, size="small"):
        super().__init__()
        self.choices = {"small": Small(), "large": Large()}
        self.encoder = self.choices[size]

    def forward(self, x):
        return self.encoder(x)


class HelperPicker(nn.Module):
    def __init__(self, size="large"):
        super().__init__()
        self.options = [Small(), Large()]
        self.encoder = self._select(size)

    def _select(self, size):
        chosen = self.options[0 if size == "small" else 1]
        return chosen

    def forward(self, x):
        return self.encoder(x)
