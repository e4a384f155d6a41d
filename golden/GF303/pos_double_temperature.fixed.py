# GF303 positive: a dtype change copies too. The CLIP-style temperature is a
# float64 copy of the parameter, so it is missing from parameters() and the
# logit scale never learns.
import math

import torch
import torch.nn as nn


class ContrastiveHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.image_proj = nn.Linear(16, 8)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)).double())

    def forward(self, x):
        z = nn.functional.normalize(self.image_proj(x), dim=-1)
        return z @ z.t() * self.logit_scale.exp().float()
