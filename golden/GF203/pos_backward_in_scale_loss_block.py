# GF203 positive: the backward pass runs inside a `with scale_loss(...) as scaled:` block
# (apex's amp API, here a small context manager of this file that yields the scaled
# loss). The batch loop still steps the schedule before the optimizer.
import contextlib

import torch
import torch.nn as nn


@contextlib.contextmanager
def scale_loss(loss, optimizer, factor=1.0):
    yield loss * factor


def fit(batches):
    model = nn.Linear(6, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5000, gamma=0.5)
    for x, y in batches:
        scheduler.step()
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        with scale_loss(loss, optimizer) as scaled:
            scaled.backward()
        optimizer.step()


if __name__ == "__main__":
    fit([(torch.randn(4, 6), torch.randn(4, 2)) for _ in range(3)])
