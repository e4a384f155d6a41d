# GF211 negative: the model has no dropout or batch norm. Its comments and its
# docstring still name them (and an old `Variable(` wrapper, commented out), but
# only code counts: eval and train mode compute the same here.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class Regressor(nn.Module):
    """Two linear layers; an earlier version used BatchNorm1d and Dropout(0.2)."""

    def __init__(self, width=32):
        super().__init__()
        self.hidden = nn.Linear(8, width)
        # self.norm = nn.BatchNorm1d(width)   removed: batches of one
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        # x = Variable(x)   (torch < 0.4)
        h = torch.tanh(self.hidden(x))  # no dropout( here on purpose
        return self.out(h)


def wrap(batch):
    return Variable(batch)


def fit(train_loader, val_loader, epochs=5):
    model = Regressor()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for x, y in train_loader:
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            err = sum(F.mse_loss(model(x), y).item() for x, y in val_loader)
        print(epoch, err)
    return model
