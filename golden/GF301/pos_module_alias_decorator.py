# GF301 positive: `import torch.cuda.amp as amp`, a decorator and a scaler with
# positional settings. The new GradScaler takes the device first and keeps the
# old positions after it.
import torch
import torch.cuda.amp as amp
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 10)

    @amp.autocast()
    def forward(self, x):
        return self.fc(x)


INIT_SCALE = 2.0 ** 14
scaler = amp.GradScaler(INIT_SCALE, 2.0, 0.5, 500)
