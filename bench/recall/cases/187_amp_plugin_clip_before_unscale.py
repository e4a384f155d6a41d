"""Source: https://github.com/Lightning-AI/pytorch-lightning/issues/9599
Title: Clip norm after scaler.unscale_ in native fp16 training
What went wrong: the training loop clips gradients right after the scaled backward and only
unscales them later, just before the optimizer step, so the clip compares the threshold with
scaled gradients and training converges very slowly.
runs: on a CUDA machine the clip sees gradients times the loss scale; on CPU the scaler is disabled and the scale is 1
scope: documented
"""
import torch
import torch.nn as nn

use_amp = torch.cuda.is_available()
device = "cuda" if use_amp else "cpu"
model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 32)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
gradient_clip_val = 0.5


def pre_optimizer_step(optimizer):
    scaler.unscale_(optimizer)


for step in range(3):
    batch = torch.randn(8, 32, device=device)
    with torch.autocast(device_type=device, enabled=use_amp):
        loss = (model(batch) - batch).pow(2).mean()
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), gradient_clip_val)  # expect: GF207
    pre_optimizer_step(optimizer)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
