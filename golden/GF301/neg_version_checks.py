# GF301 negative: the deprecated spelling kept for old torch releases behind a
# version test (a flag computed from `torch.__version__`, a version helper,
# `hasattr` on torch, a comparison with a version tuple). The other branch already
# uses the current API; rewriting the old branch would break the old releases.
import torch
from packaging import version

from .compat import is_torch_version

_TORCH_GREATER_EQUAL_2_4 = version.parse(torch.__version__) >= version.parse("2.4.0")
TORCH_VERSION = tuple(int(part) for part in torch.__version__.split(".")[:2])
_new_amp_api = hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler")


def make_scaler():
    if _TORCH_GREATER_EQUAL_2_4:
        return torch.amp.GradScaler("cuda")
    else:
        return torch.cuda.amp.GradScaler()


def autocast_for(dtype):
    if is_torch_version(">=", "2.3"):
        return torch.autocast("cuda", dtype=dtype)
    return torch.cuda.amp.autocast(dtype=dtype)


def cpu_autocast():
    if not hasattr(torch, "autocast"):
        return torch.cpu.amp.autocast()
    return torch.autocast("cpu")


def scaler_by_parse(init_scale):
    if version.parse(torch.__version__) < version.parse("2.3"):
        return torch.cuda.amp.GradScaler(init_scale=init_scale)
    return torch.amp.GradScaler("cuda", init_scale=init_scale)


def scaler_by_tuple():
    return torch.amp.GradScaler("cuda") if TORCH_VERSION >= (2, 4) else torch.cuda.amp.GradScaler()


def scaler_by_flag():
    if _new_amp_api:
        return torch.amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()
