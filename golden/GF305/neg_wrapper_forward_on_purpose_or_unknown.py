# GF305 negative: wrappers whose call of the wrapped forward is on purpose or not
# shown to be a module's. `Probe` registers its own hook on the layer it wraps and,
# inside that hook, reruns the layer through `forward` (calling the layer there would
# run the hook again, without end). `Loose` is never constructed in this file, and
# `Mixed` is handed a plain object once: what they wrap is not shown to be a module.
import torch
import torch.nn as nn


class Probe(nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer
        self.layer.register_forward_hook(self._again)
        self.second = None

    def _again(self, mod, inp, out):
        self.second = self.layer.forward(inp[0] * 2)

    def forward(self, x):
        return self.layer(x)


class Loose(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner.forward(x)


class Table:
    def forward(self, x):
        return x + 1


class Mixed(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner.forward(x)


probe = Probe(nn.Linear(4, 4))
mixed_a = Mixed(nn.Linear(4, 4))
mixed_b = Mixed(Table())
