import torch
from packaging import version


def make_scaler(enabled=True):
    # The old API only where the new one is missing: a compatibility branch, kept.
    if version.parse(torch.__version__) < version.parse("2.4"):
        from torch.cuda.amp import GradScaler

        return GradScaler(enabled=enabled)
    else:
        from torch.amp import GradScaler

        return GradScaler("cuda", enabled=enabled)


def amp_context():
    if torch.__version__ >= "2.4":
        from torch.amp import autocast

        return autocast("cuda")
    else:
        from torch.cuda.amp import autocast

        return autocast()


def legacy_context():
    # gated on the release that introduced AMP, not on the deprecation: left to the author
    if torch.__version__ >= "1.6":
        from torch.cuda.amp import autocast

        return autocast()
    return None


def fallback_in_a_function():
    try:
        from torch.amp import GradScaler
    except ImportError:
        from torch.cuda.amp import GradScaler
    return GradScaler()
