# GF305 positive inside a module: `self.encoder.forward(h)` skips the
# encoder's hooks (a hook-based weight_norm or pruning mask on it would be
# ignored). The module check compares the class before and after.
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(x).tanh()


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = nn.Linear(8, 8)

    def forward(self, x):
        return self.decoder(self.encoder.forward(x))
