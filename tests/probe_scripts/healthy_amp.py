"""Healthy: mixed precision with autocast and a GradScaler (CUDA when present; on CPU both are disabled, as a
CPU user would run it), unscale_ before clipping."""
import torch
import torch.nn as nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
use_amp = device == "cuda"
model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 8)).to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
scaler = torch.amp.GradScaler(device, enabled=use_amp)
for step in range(6):
    x = torch.randn(16, 32, device=device)
    y = torch.randint(0, 8, (16,), device=device)
    opt.zero_grad(set_to_none=True)
    with torch.autocast(device_type=device, dtype=torch.float16 if use_amp else torch.bfloat16, enabled=use_amp):
        loss = nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
