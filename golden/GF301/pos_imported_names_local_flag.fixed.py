# GF301 positive: the names are imported from torch.cuda.amp, and the flag is a
# function argument. `enabled=use_amp` is kept as is; the verifier replaces the
# local name by the same probe values (True, False) in both calls.
import torch
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast


def train(model, loader, optimizer, use_amp=True):
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", enabled=use_amp):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    return scaler
