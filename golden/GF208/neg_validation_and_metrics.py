# GF208 negative: totals of values that carry no graph: validation under
# no_grad, an accuracy count, and the loss re-evaluated under no_grad after the
# step.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(16, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(100)]

for epoch in range(10):
    correct = 0
    after_step = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        optimizer.step()
        correct += (logits.argmax(1) == y).sum().item()
        with torch.no_grad():
            loss = F.cross_entropy(model(x), y)
        after_step += loss
    val_loss = 0.0
    with torch.no_grad():
        for x, y in loader:
            val_loss += F.cross_entropy(model(x), y)
