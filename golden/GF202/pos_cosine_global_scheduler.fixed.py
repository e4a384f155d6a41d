# GF202 positive: the scheduler is built at module level and stepped per batch
# inside `fit`. CosineAnnealingLR(T_max=epochs) anneals over `epochs` steps,
# which per batch is a fraction of the first epoch (then it climbs back up).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import CosineAnnealingLR

epochs = 50
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
scheduler = CosineAnnealingLR(optimizer, T_max=epochs, eta_min=1e-6)


def fit(loader):
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} lr {scheduler.get_last_lr()[0]:.2e}")
        scheduler.step()
