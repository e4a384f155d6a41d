# GF205 positive: the train step clears the gradients only when mixed precision
# is off. With `half=True` nothing ever clears them, and each step applies the
# sum of all earlier steps' gradients. backward() and step() run on both paths.
import torch
import torch.nn as nn


def train_step(model, optimizer, x, y, half):
    if half:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = ((model(x) - y) ** 2).mean()
    else:
        optimizer.zero_grad(set_to_none=True)
        loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    return loss.item()


def fit(loader, half=True):
    model = nn.Linear(6, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(2):
        for x, y in loader:
            if half:
                out = model(x.bfloat16().float())
            else:
                optimizer.zero_grad()
                out = model(x)
            ((out - y) ** 2).mean().backward()
            optimizer.step()
