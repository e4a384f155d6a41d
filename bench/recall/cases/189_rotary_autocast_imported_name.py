"""Source: https://github.com/lucidrains/x-transformers/issues/265
Title: Pytorch warning with autocast
What went wrong: the library imports `autocast` from `torch.cuda.amp` and uses it to switch mixed
precision off inside its rotary embedding, which current PyTorch reports as deprecated on every
call.
runs: runs; torch emits FutureWarning "`torch.cuda.amp.autocast(args...)` is deprecated"
scope: documented
"""
import torch
import torch.nn as nn
from torch.cuda.amp import autocast


class RotaryEmbedding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, seq_len):
        with autocast(enabled=False):  # expect: GF301
            t = torch.arange(seq_len, dtype=self.inv_freq.dtype)
            freqs = torch.einsum("i,j->ij", t, self.inv_freq)
            return torch.cat((freqs, freqs), dim=-1)


rotary = RotaryEmbedding(8)
print(rotary(5).shape)
