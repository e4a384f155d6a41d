# GF208 positive on a term of the loss: `ce` flows into the backpropagated
# loss, and its running total keeps the graph.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(16, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(100)]

for epoch in range(10):
    total_ce = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        logits = model(x)
        ce = F.cross_entropy(logits, y)
        loss = ce + 1e-4 * logits.pow(2).mean()
        loss.backward()
        optimizer.step()
        total_ce += ce
