# GF303 negative: `.to()` / `.cuda()` on a module moves its parameters in place
# and returns the module itself: everything stays registered.
import torch
import torch.nn as nn

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8).to(DEVICE)
        self.out = nn.Sequential(nn.ReLU(), nn.Linear(8, 2)).cuda()

    def forward(self, x):
        return self.out(self.fc(x))


model = Encoder().to(DEVICE)
