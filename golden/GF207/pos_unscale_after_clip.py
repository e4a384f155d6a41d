# GF207 positive: `unscale_` is there, but after the clip. The fix moves it up.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(64, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
loader = [(torch.randn(8, 64), torch.randint(0, 4, (8,))) for _ in range(100)]

for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
