"""Source: https://github.com/NCAR/miles-credit/pull/141
Title: Gradscaler for grap clipping fix
What went wrong: the trainer clips the gradient norm right after `scaler.scale(loss).backward()`
without unscaling first, so the threshold is compared with gradients multiplied by the loss
scale; the PR adds `scaler.unscale_(optimizer)` before the clip.
runs: trains; the clip sees gradients 65536 times too large and cuts every update to a sliver
scope: documented
"""
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Conv2d(4, 16, 3, padding=1), nn.SiLU(), nn.Conv2d(16, 4, 3, padding=1)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler(device)
grad_max_norm = 1.0

for step in range(3):
    x = torch.randn(2, 4, 8, 8, device=device)
    y = torch.randn(2, 4, 8, 8, device=device)
    optimizer.zero_grad()
    with torch.autocast(device_type=device, dtype=torch.bfloat16):
        loss = nn.functional.mse_loss(model(x).float(), y)
    scaler.scale(loss).backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_max_norm)  # expect: GF207
    scaler.step(optimizer)
    scaler.update()
    print(step, float(norm))
