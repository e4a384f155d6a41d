"""Source: https://github.com/mlfoundations/open_clip/issues/573
Title: None of the inputs have requires_grad=True. Gradients will be None
What went wrong: with grad checkpointing on, each residual block runs through
`checkpoint(r, x, ...)` with the default reentrant implementation; the run warned that no
input requires grad, and passing use_reentrant=False removed the warning and improved loss.
runs: warns "None of the inputs have requires_grad=True"; here no block input requires grad,
so backward() then raises RuntimeError (element 0 of tensors does not require grad)
scope: documented
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, attn_mask=None):
        return x + self.mlp(self.ln(x))


class Transformer(nn.Module):
    def __init__(self, width=32, layers=3):
        super().__init__()
        self.grad_checkpointing = True
        self.resblocks = nn.ModuleList([Block(width) for _ in range(layers)])

    def forward(self, x, attn_mask=None):
        for r in self.resblocks:
            if self.grad_checkpointing and not torch.jit.is_scripting():
                x = checkpoint(r, x, attn_mask)  # expect: GF306
            else:
                x = r(x, attn_mask=attn_mask)
        return x


model = Transformer()
model(torch.randn(2, 5, 32)).sum().backward()
