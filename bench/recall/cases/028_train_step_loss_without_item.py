"""Source: https://github.com/mrdbourke/pytorch-deep-learning/issues/583
Title: 04_pytorch_custom_datasets.ipynb: .detach() required by matplotlib when plotting loss curves
What went wrong: the reporter's train_step summed the loss tensor instead of `loss.item()`,
so the per-epoch results held graph-carrying tensors that matplotlib could not plot.
runs: trains but results["train_loss"] holds tensors with grad (plotting raises)
scope: documented
"""
import torch
import torch.nn as nn


def train_step(model, dataloader, loss_fn, optimizer):
    model.train()
    train_loss, train_acc = 0, 0
    for X, y in dataloader:
        y_pred = model(X)
        loss = loss_fn(y_pred, y)
        train_loss += loss  # expect: GF208
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        train_acc += (y_pred.argmax(dim=1) == y).float().mean().item()
    return train_loss / len(dataloader), train_acc / len(dataloader)


model_0 = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10), nn.ReLU(), nn.Linear(10, 3))
opt = torch.optim.Adam(model_0.parameters(), lr=1e-3)
data = [(torch.randn(4, 3, 8, 8), torch.randint(0, 3, (4,))) for _ in range(5)]
results = {"train_loss": []}
for epoch in range(3):
    tl, ta = train_step(model_0, data, nn.CrossEntropyLoss(), opt)
    results["train_loss"].append(tl)
