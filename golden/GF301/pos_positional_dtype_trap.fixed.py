# GF301 positive with the rewrite's trap: torch.cuda.amp.autocast(enabled, dtype)
# takes `enabled` first, torch.autocast(device_type, dtype, enabled) takes
# `dtype` second. `torch.autocast("cuda", True, torch.bfloat16)` would set
# dtype=True, so positional arguments become keywords.
import torch


def generate(model, tokens):
    with torch.autocast("cuda", enabled=True, dtype=torch.bfloat16):
        return model(tokens)
