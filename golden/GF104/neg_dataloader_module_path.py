"""`torch.utils.data.DataLoader(...)` names the `torch.utils.data` submodule, not a tensor's `.data`, even when the
batches it yields feed a loss from a callable the file cannot see (a trainer passed in)."""
import torch


def fit(trainer, dataset, optimizer, steps):
    loader = torch.utils.data.DataLoader(dataset, batch_size=8, shuffle=True)
    batches = iter(loader)
    for _ in range(steps):
        batch = next(batches)
        loss = trainer(batch).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
