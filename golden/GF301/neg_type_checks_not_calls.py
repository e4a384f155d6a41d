# GF301 negative: referring to the old classes (an isinstance check, a
# compatibility table) emits no warning; only constructing them does.
import torch

COMPAT = {"scaler": torch.cuda.amp.GradScaler}


def is_legacy_scaler(scaler):
    return isinstance(scaler, torch.cuda.amp.GradScaler)
