"""Source: https://github.com/Deci-AI/super-gradients/pull/653
Title: Fix grad clipping stage + upscale gradients before clipping
What went wrong: with gradient accumulation and AMP, the trainer clipped after every
micro-batch's backward, before the accumulated step, and on scaled gradients; the fix clips
once, right before the step, after `scaler.unscale_(optimizer)`.
runs: trains; each clip works on scaled, partly accumulated gradients
scope: documented
"""
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"
net = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)).to(device)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
scaler = torch.amp.GradScaler(device)
batch_accumulate = 4
clip_grad_norm = 10.0

for batch_idx in range(8):
    inputs = torch.randn(16, 20, device=device)
    targets = torch.randint(0, 5, (16,), device=device)
    with torch.autocast(device_type=device, dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(net(inputs).float(), targets) / batch_accumulate
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), clip_grad_norm)  # expect: GF207
    if (batch_idx + 1) % batch_accumulate == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
