# GF301 negative: the current API, in all its spellings.
import torch
from torch.amp import GradScaler, autocast

scaler = torch.amp.GradScaler("cuda")
scaler2 = GradScaler("cuda", init_scale=1024.0)


def step(model, x):
    with torch.autocast("cuda", dtype=torch.float16):
        a = model(x)
    with torch.amp.autocast("cuda", enabled=False):
        b = model(x)
    with autocast(device_type="cpu", dtype=torch.bfloat16):
        c = model(x)
    return a, b, c
