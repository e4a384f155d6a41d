# GF203 negative: one training function per epoch dispatches on the model's family. The
# first `if` block (when training) runs its batch loop, steps the scheduler once after it, and returns; a
# separate `if` block follows with its own loop and optimizer step. On the path through the
# first block nothing runs after its scheduler step, so the order is right.
import torch
import torch.nn as nn


def train_epoch(kind, model, batches, optimizer, scheduler, training=True):
    crit = nn.MSELoss()
    if kind == "autoencoder":
        if training:
            for x in batches:
                loss = crit(model(x), x)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            scheduler.step()
            return float(loss)
        else:
            return [float(crit(model(x), x)) for x in batches]
    if kind == "forecaster":
        if training:
            for x in batches:
                loss = crit(model(x[:, :-1]), x[:, 1:])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            scheduler.step()
            return float(loss)
        else:
            return [float(crit(model(x[:, :-1]), x[:, 1:])) for x in batches]
    raise ValueError(kind)


def main(model, batches):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.9)
    for epoch in range(20):
        train_epoch("autoencoder", model, batches, optimizer, scheduler)
