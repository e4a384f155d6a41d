"""Source: https://github.com/victorchall/EveryDream2trainer/pull/175
Title: correctly apply `clip_grad_scale` to unscaled gradients
What went wrong: under AMP the `--clip_grad_scale` option clipped the scaled gradients, so
users had to pass values like 1e5 and a value of 1.0 effectively halted training.
runs: trains but a clip of 1.0 shrinks the true gradients by the loss scale
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

unet = nn.Sequential(nn.Conv2d(4, 32, 3, padding=1), nn.SiLU(), nn.Conv2d(32, 4, 3, padding=1))
optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-6)
scaler = torch.amp.GradScaler("cuda", init_scale=2**17.5, enabled=torch.cuda.is_available())
clip_grad_norm = 1.0
latents = [torch.randn(1, 4, 16, 16) for _ in range(3)]

for step, latent in enumerate(latents):
    noise = torch.randn_like(latent)
    with torch.autocast("cuda", enabled=torch.cuda.is_available()):
        model_pred = unet(latent + noise)
    loss = F.mse_loss(model_pred.float(), noise.float(), reduction="mean")
    scaler.scale(loss).backward()
    if clip_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_(parameters=unet.parameters(), max_norm=clip_grad_norm)  # expect: GF207
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
