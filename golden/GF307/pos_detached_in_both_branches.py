# GF307 positive: the loss is bound in two exclusive branches and both cut the prediction.
# Whichever runs, nothing reaches the model: a sibling branch only keeps a name live when
# one of the branches gives it a path.
import torch
import torch.nn as nn


model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.MSELoss()


def train(loader, robust=False):
    for x, y in loader:
        out = model(x)
        if robust:
            loss = nn.functional.smooth_l1_loss(out.detach(), y)
        else:
            loss = criterion(out.detach(), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
