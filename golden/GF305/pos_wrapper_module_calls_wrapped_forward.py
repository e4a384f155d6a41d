# GF305 positive: a module that rescales the output of the layer it wraps calls that
# layer through `.forward(...)`. Every construction in the file hands it a module, so
# the hooks registered on the wrapped layer (here a forward hook that records the
# activations) never run. The fix calls the wrapped module; it is unsafe because a
# caller elsewhere may wrap something else.
import torch
import torch.nn as nn


class Rescaled(nn.Module):
    def __init__(self, layer, scale=0.5):
        super().__init__()
        self.layer = layer
        self.scale = scale

    def forward(self, x):
        return self.layer.forward(x) * self.scale


seen = []
block = Rescaled(nn.Linear(6, 3))
block.layer.register_forward_hook(lambda mod, inp, out: seen.append(out.detach()))
block(torch.randn(2, 6))
