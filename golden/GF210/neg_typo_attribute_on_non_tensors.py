# GF210 negative: an attribute named `require_grad` on objects that are not
# tensors (a module's own flag, a config namespace).
import types

import torch.nn as nn


class Adapter(nn.Module):
    def __init__(self, require_grad=True):
        super().__init__()
        self.require_grad = require_grad
        self.proj = nn.Linear(8, 8)


cfg = types.SimpleNamespace()
cfg.require_grad = False
