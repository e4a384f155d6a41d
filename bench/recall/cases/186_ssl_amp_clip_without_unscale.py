"""Source: https://github.com/TorchSSL/TorchSSL/pull/59
Title: fix bug in gradient clipping
What went wrong: with automatic mixed precision the semi-supervised trainer clips the gradients
right after `scaler.scale(loss).backward()` without `scaler.unscale_(optimizer)`, so the clip
threshold is compared with gradients multiplied by the loss scale.
runs: on a CUDA machine the clip acts on scaled gradients (about 65536 times too large) and clips nearly every step; on CPU the scaler is disabled and the scale is 1
scope: documented
"""
import torch
import torch.nn as nn

use_amp = torch.cuda.is_available()
device = "cuda" if use_amp else "cpu"
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9)
scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
clip = 1.0
for it in range(3):
    x_lb, y_lb = torch.randn(8, 16, device=device), torch.randint(0, 10, (8,), device=device)
    x_ulb = torch.randn(16, 16, device=device)
    with torch.autocast(device_type=device, enabled=use_amp):
        sup_loss = nn.functional.cross_entropy(model(x_lb), y_lb)
        unsup_loss = model(x_ulb).softmax(-1).var(dim=0).mean()
        total_loss = sup_loss + unsup_loss
    scaler.scale(total_loss).backward()
    if clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)  # expect: GF207
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
