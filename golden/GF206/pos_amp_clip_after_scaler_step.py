# GF206 positive under AMP: the clip comes after `scaler.step` and `update`.
# Moving it before the step also needs `scaler.unscale_(optimizer)` first (else
# it would clip scaled gradients, GF207); the fix inserts both.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(64, 4)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cuda")
loader = [(torch.randn(8, 64), torch.randint(0, 4, (8,))) for _ in range(100)]

for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
