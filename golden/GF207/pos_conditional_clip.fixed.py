# GF207 positive: the clip is optional (`if max_grad_norm > 0`); the unscale is
# inserted inside the same branch, right before the clip.
import torch
import torch.nn as nn
import torch.nn.functional as F

max_grad_norm = 1.0
model = nn.Linear(64, 4)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cuda")
loader = [(torch.randn(8, 64), torch.randint(0, 4, (8,))) for _ in range(100)]

for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        if max_grad_norm > 0:
            scaler.unscale_(optimizer)
            # clip the global norm
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        scaler.step(optimizer)
        scaler.update()
