# GF211 negative: the module-level model has no dropout or batch norm, so the
# eval mode the metrics block leaves on changes nothing.
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


def run(loader, probe, epochs=20):
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x).squeeze(-1), y)
            loss.backward()
            optimizer.step()
        model.train(False)
        with torch.no_grad():
            print(epoch, model(probe).mean().item())
