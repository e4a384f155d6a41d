# GF207 positive without a fix: the clip runs per parameter group in a nested
# loop; an `unscale_` there would run twice. gradfix reports it only.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(64, 4)
optimizer = torch.optim.SGD([{"params": model.weight}, {"params": model.bias, "lr": 0.01}], lr=0.1)
scaler = torch.amp.GradScaler("cuda")
loader = [(torch.randn(8, 64), torch.randint(0, 4, (8,))) for _ in range(100)]

for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    for group in optimizer.param_groups:
        torch.nn.utils.clip_grad_norm_(group["params"], 1.0)
    scaler.step(optimizer)
    scaler.update()
