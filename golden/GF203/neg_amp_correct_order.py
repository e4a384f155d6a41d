# GF203 negative: the correct order under AMP. PyTorch may still warn here when
# the scaler skips the first steps (Lightning #16228); the code is right.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(64, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=1000)
scaler = torch.amp.GradScaler("cuda")
loader = [(torch.randn(8, 64), torch.randint(0, 4, (8,))) for _ in range(1000)]

for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    scheduler.step()
