# GF201 positive: `loss /= 1e4` rescales the whole loss right before backward.
# The fix removes the statement, so the line disappears.
import torch.nn.functional as F


def train_step(model, optimizer, batch):
    optimizer.zero_grad()
    pred = model(batch["x"])
    loss = F.mse_loss(pred, batch["y"])
    loss /= 1e4
    loss.backward()
    optimizer.step()
    return loss.item()


def train(model, optimizer, loader, epochs=5):
    for epoch in range(epochs):
        for batch in loader:
            train_step(model, optimizer, batch)
