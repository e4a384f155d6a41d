# GF202 negative: StepLR stepped once per epoch after the batch loop (the
# intended use), and ReduceLROnPlateau stepped on the validation loss.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 1)
train_loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]
val_loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(5)]
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", patience=3)

for epoch in range(100):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    scheduler.step()

    model.eval()
    val_loss = 0.0
    with torch.no_grad():
        for x, y in val_loader:
            val_loss += F.mse_loss(model(x), y).item()
    plateau.step(val_loss)
