# GF212 positive: the forward pass and the loss sit inside torch.no_grad() (copied
# from an evaluation loop): the model's output has no grad_fn, so backward()
# raises "element 0 of tensors does not require grad".
import torch
import torch.nn as nn


def fit(loader, epochs=5):
    model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            with torch.no_grad():
                pred = model(x).squeeze(-1)
                loss = nn.functional.mse_loss(pred, y)
            loss.backward()
            optimizer.step()
