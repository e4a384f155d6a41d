# GF203 positive without a fix: a statement between the scheduler step and the
# optimizer step reads the learning rate, so moving the scheduler would change
# what is logged; gradfix reports it and leaves the reordering to the user.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(12, 3)
loader = [(torch.randn(8, 12), torch.randint(0, 3, (8,))) for _ in range(30)]
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2, total_steps=30 * len(loader))
history = []

for epoch in range(30):
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        scheduler.step()
        history.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
