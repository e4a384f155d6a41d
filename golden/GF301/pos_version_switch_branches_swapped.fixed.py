import torch
import torch.nn as nn
from packaging import version


def make_scaler(enabled=True):
    # Meant as "new torch: new API", but the branches are the wrong way round: every
    # release from 2.4 on builds the deprecated scaler and warns.
    if version.parse(torch.__version__) >= version.parse("2.4.0"):
        from torch.cuda.amp import GradScaler

        return torch.amp.GradScaler("cuda", enabled=enabled)
    else:
        from torch.amp import GradScaler

        return GradScaler("cuda", enabled=enabled)


def amp_context(dtype=torch.float16):
    if "2.4" <= torch.__version__:
        from torch.cuda.amp import autocast

        return torch.autocast("cuda", dtype=dtype)
    from torch.amp import autocast

    return autocast("cuda", dtype=dtype)


class Projector(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, x):
        with amp_context():
            return self.lin(x)
