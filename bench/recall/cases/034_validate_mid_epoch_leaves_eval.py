"""Source: https://github.com/fartashf/vsepp/issues/4
Title: Finish validation without running model.train()
What went wrong: validation runs every `val_step` iterations inside the batch loop and
switches the model to eval mode; train mode is only restored at the next epoch, so the rest
of the epoch trains with dropout/batch-norm in eval mode.
runs: trains but most batches run with dropout off and frozen BN statistics
scope: extension (eval entered inside the batch loop; train() is restored at epoch start)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 32))
optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
train_loader = [torch.randn(16, 32) for _ in range(12)]
val_loader = [torch.randn(16, 32) for _ in range(2)]
val_step = 4


def validate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum(F.mse_loss(model(x), x).item() for x in loader)


iters = 0
for epoch in range(3):
    model.train()
    for x in train_loader:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), x)
        loss.backward()
        optimizer.step()
        iters += 1
        if iters % val_step == 0:
            validate(model, val_loader)  # expect: GF211
