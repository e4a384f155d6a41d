import torch.nn as nn


def activation(name):
    return nn.GELU() if name == "gelu" else nn.ReLU()


def maybe_dropout(p):
    if p > 0:
        return nn.Dropout(p)
    return None


def layer_sizes(width, depth):
    return [width] * depth


class Head(nn.Module):
    """Factories that return parameter-free modules, sometimes nothing, or plain data: nothing to register."""

    def __init__(self, width=8, depth=3, p=0.1):
        super().__init__()
        self.acts = [activation("gelu") for _ in range(depth)]
        self.drops = [maybe_dropout(p), maybe_dropout(0.0)]
        self.sizes = [layer_sizes(width, depth)]
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        for act in self.acts:
            x = act(x)
        if self.drops[0] is not None:
            x = self.drops[0](x)
        return self.out(x)
