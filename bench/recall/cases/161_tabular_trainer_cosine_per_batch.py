"""Source: https://github.com/automl/Auto-PyTorch/pull/210
Title: Fixing the scheduler to update for epochs and not batch iterations
What went wrong: the training loop stepped the learning-rate scheduler after every batch,
although the scheduler's period is counted in epochs, so the schedule ran through far too
quickly; the PR steps it once per epoch.
runs: trains; the cosine reaches its minimum after 20 batches (2 epochs) instead of 20 epochs, then climbs and falls again
scope: documented
"""
import torch
import torch.nn as nn

epochs = 20
model = nn.Sequential(nn.Linear(14, 64), nn.ReLU(), nn.Linear(64, 2))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
criterion = nn.CrossEntropyLoss()
train_loader = [(torch.randn(32, 14), torch.randint(0, 2, (32,))) for _ in range(10)]

for epoch in range(epochs):
    model.train()
    for X, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(X), y)
        loss.backward()
        optimizer.step()
        scheduler.step()  # expect: GF202
    print(epoch, scheduler.get_last_lr())
