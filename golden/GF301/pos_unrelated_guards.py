# GF301 positive: a `try` that catches an out-of-memory RuntimeError and an `if`
# on CUDA availability are not version fallbacks. Neither offers the current API,
# so the deprecated calls inside them are reported and rewritten.
import torch
import torch.nn.functional as F


def train_step(model, optimizer, x, y, use_amp):
    if torch.cuda.is_available():
        scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
    else:
        scaler = None
    try:
        with torch.cuda.amp.autocast(enabled=use_amp):
            loss = F.cross_entropy(model(x), y)
    except RuntimeError:
        torch.cuda.empty_cache()
        raise
    return loss, scaler
