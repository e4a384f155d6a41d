# GF203 negative: ReduceLROnPlateau stepped on the last validation loss at the
# start of an epoch, and a scheduler stepped with an explicit epoch argument:
# neither skips a schedule value.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 1)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=2)
cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=100)
val_loss = float("inf")

for epoch in range(100):
    plateau.step(val_loss)
    cosine.step(epoch)
    for x, y in loader:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        val_loss = sum(F.mse_loss(model(x), y).item() for x, y in loader)
