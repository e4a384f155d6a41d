# GF306 positive: a multi-line call with a trailing comma; the flag is added on
# its own line.
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.Sequential(nn.Linear(12, 12), nn.Tanh())
        self.out = nn.Linear(12, 3)

    def forward(self, x):
        h = torch.utils.checkpoint.checkpoint(
            self.attn,
            x,
            preserve_rng_state=False,
        )
        return self.out(h)


model = Encoder()
model(torch.randn(4, 12)).sum().backward()
