# GF211 negative: the same split as a plain function, spelled with `model.train()` and
# `model.eval()`. The branch that backpropagates opens with the train call, so every
# optimizer step sees train mode whatever the other branch did on an earlier pass.
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(5, 8), nn.Dropout(0.2), nn.Linear(8, 1))
optim = torch.optim.SGD(model.parameters(), lr=0.05)
mse = nn.MSELoss()


def run(loader, learn):
    seen = 0
    for xb, yb in loader:
        if learn:
            model.train()
            pred = model(xb)
            err = mse(pred, yb)
            optim.zero_grad()
            err.backward()
            optim.step()
        else:
            model.eval()
            with torch.no_grad():
                pred = model(xb)
        seen += len(xb)
    return seen


pairs = [(torch.randn(3, 5), torch.randn(3, 1)) for _ in range(4)]
for epoch in range(2):
    run(pairs, True)
    run(pairs, False)
