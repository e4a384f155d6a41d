# GF211 negative: the final evaluation runs in the last epoch and then leaves the
# epoch loop with `break`: no later epoch trains in eval mode.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.2), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)


def fit(loader, val_loader, epochs=5):
    model.train()
    for epoch in range(epochs):
        for x, y in loader:
            loss = F.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        if epoch == epochs - 1:
            model.eval()
            with torch.no_grad():
                val = sum(F.mse_loss(model(x), y).item() for x, y in val_loader)
            print("final", val)
            break
