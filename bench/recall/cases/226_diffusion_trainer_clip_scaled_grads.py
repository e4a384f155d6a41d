"""Source: https://github.com/harubaru/waifu-diffusion/issues/64
Title: clip_grad_norm applied to scaled gradients
What went wrong: with fp16 enabled the diffusion fine-tuning loop calls
`scaler.scale(loss).backward()` and then clips the UNet's gradients with `clip_grad_norm_`
before `scaler.step(optimizer)`, without `scaler.unscale_(optimizer)`, so the norm threshold is
compared with gradients multiplied by the loss scale.
runs: on a CUDA machine the clip sees gradients about 65536 times too large and clips almost every step; on CPU the scaler is disabled and the run only trains
scope: documented
"""
import torch
import torch.nn as nn

use_fp16 = torch.cuda.is_available()
device = "cuda" if use_fp16 else "cpu"
unet = nn.Sequential(nn.Conv2d(4, 16, 3, padding=1), nn.SiLU(), nn.Conv2d(16, 4, 3, padding=1)).to(device)
optimizer = torch.optim.AdamW(unet.parameters(), lr=5e-6)
scaler = torch.amp.GradScaler("cuda", enabled=use_fp16)
clip_grad_norm = 1.0
for step in range(3):
    latents = torch.randn(2, 4, 8, 8, device=device)
    noise = torch.randn_like(latents)
    with torch.autocast(device_type=device, enabled=use_fp16):
        noise_pred = unet(latents + noise)
        loss = nn.functional.mse_loss(noise_pred.float(), noise.float())
    scaler.scale(loss).backward()
    if clip_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_(unet.parameters(), clip_grad_norm)  # expect: GF207
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
