"""Source: https://github.com/tier4/Diffusion-Planner/pull/372
Title: fix(train_epoch): release per-batch loss graphs during training
What went wrong: the epoch function appends each batch's loss tensor to an `epoch_loss` list and
averages the list only when the epoch ends, so every batch's autograd graph is kept alive until
then; the fix appends a detached Python scalar.
runs: trains; `epoch_loss` holds tensors with grad_fn for every batch (the run prints the first one)
scope: extension
"""
import torch
import torch.nn as nn


def train_epoch(loader, model, optimizer):
    epoch_loss = []
    model.train()
    for inputs, targets in loader:
        pred = model(inputs)
        loss = nn.functional.smooth_l1_loss(pred, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_loss.append(loss)  # expect: GF208
    return torch.stack(epoch_loss).mean().item(), epoch_loss[0].grad_fn


model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2 * 8))
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
loader = [(torch.randn(4, 10), torch.randn(4, 16)) for _ in range(3)]
print(train_epoch(loader, model, optimizer))
