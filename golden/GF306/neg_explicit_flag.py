# GF306 negative: the flag is explicit. `use_reentrant=True` is a deliberate
# choice and is left alone (TorchFix TOR003 also only asks for the flag).
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        h = checkpoint(self.a, x, use_reentrant=False)
        return checkpoint(self.b, h, use_reentrant=True)
