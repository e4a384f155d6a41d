# GF104 positive: an L1 sparsity term built by a generator over the model's
# parameters, reading `.data`; it is added to the loss in place with `+=`.
# The term carries no gradient, so the sparsity pressure never reaches the
# weights.
import torch
import torch.nn as nn

model = nn.Linear(10, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
data = [(torch.randn(16, 10), torch.randn(16, 1)) for _ in range(3)]
for inputs, targets in data:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(inputs), targets)
    loss += 1e-4 * sum(p.abs().sum() for p in model.parameters())
    loss.backward()
    optimizer.step()
