"""Source: https://github.com/Wan-Video/Wan2.1/issues/453
Title: 建议将所有 `torch.cuda.amp.autocast` 替换为 `torch.amp.autocast(device_type="cuda", …)`
What went wrong: the model code imports `torch.cuda.amp as amp` and uses `amp.autocast(...)` both as
a decorator on forward methods and as a context manager, so every forward emits "FutureWarning:
torch.cuda.amp.autocast(args...) is deprecated" (the issue asks to switch to
`torch.amp.autocast(device_type="cuda", ...)`).
runs: runs; torch 2.13 prints the FutureWarning at each use
scope: documented
"""
import torch
import torch.cuda.amp as amp
import torch.nn as nn


class TimeEmbedding(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, dim))

    @amp.autocast(enabled=False)  # expect: GF301
    def sinusoid(self, t, dim=16):
        freqs = torch.exp(-torch.arange(dim // 2).float() / (dim // 2))
        args = t.float()[:, None] * freqs[None]
        return torch.cat([args.cos(), args.sin()], dim=-1)

    def forward(self, t):
        with amp.autocast(dtype=torch.float32):
            return self.proj(self.sinusoid(t))


emb = TimeEmbedding()
print(emb(torch.tensor([1.0, 10.0, 100.0])).shape)
