"""Source: https://github.com/pytorch/ignite/issues/583
Title: Fix Gradients accumulation example
What went wrong: the FAQ's accumulation example clears the gradients at the start of the
same iterations on which it steps (`iteration % accumulation_steps == 0`), so the batches
accumulated since the last step are wiped just before the step and only one batch counts.
runs: trains; every step uses only the gradient of the batch of that iteration
scope: extension (zero_grad under the step's own condition, at the top of the update function)
"""
import torch
import torch.nn as nn

model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
criterion = nn.MSELoss()
accumulation_steps = 4


def update_fn(iteration, batch):
    model.train()
    if iteration % accumulation_steps == 0:
        optimizer.zero_grad()  # expect: GF204
    x, y = batch
    loss = criterion(model(x), y) / accumulation_steps
    loss.backward()
    if iteration % accumulation_steps == 0:
        optimizer.step()
    return loss.item()


for iteration in range(1, 13):
    update_fn(iteration, (torch.randn(8, 10), torch.randn(8, 1)))
