"""Source: https://github.com/pytorch/pytorch/issues/47175
Title: [feature request] Show warning if optimizer.zero_grad() was not called before optimizer.step()
What went wrong: the request describes a common bug, calling `zero_grad()` at the beginning of each
epoch instead of each iteration; within the epoch every `step()` then uses the sum of the
gradients of all batches so far.
runs: trains; within an epoch the gradient norm grows batch after batch (the run prints it)
scope: documented
"""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = [(torch.randn(10, 8), torch.randn(10, 1)) for _ in range(6)]
for epoch in range(2):
    optimizer.zero_grad()
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()  # expect: GF205
        optimizer.step()
        print(epoch, model[0].weight.grad.norm().item())
