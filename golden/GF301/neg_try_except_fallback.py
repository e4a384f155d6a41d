# GF301 negative: a library that supports torch releases before and after the
# `torch.amp` API tries one spelling and falls back to the other on the error an
# older (or newer) release raises. The deprecated call there is the
# compatibility branch, whichever side of the `try` it is on.
import torch

try:
    from torch.amp import GradScaler
except ImportError:
    from torch.cuda.amp import GradScaler


def build_scaler(enabled):
    try:
        return torch.amp.GradScaler("cuda", enabled=enabled)
    except (AttributeError, TypeError):
        return torch.cuda.amp.GradScaler(enabled=enabled)


def mixed_precision_context(dtype):
    try:
        context = torch.cuda.amp.autocast(dtype=dtype)
    except AttributeError:
        context = torch.autocast("cuda", dtype=dtype)
    return context


def shared_scaler():
    # the name is bound by either import: which class it is depends on the release
    return GradScaler()
