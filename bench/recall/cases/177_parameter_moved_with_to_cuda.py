"""Source: https://github.com/pytorch/pytorch/issues/17484
Title: Parameter not registering if .to(device) is used
What went wrong: a module wraps a tensor in `nn.Parameter` and then calls `.to("cuda")` on the
parameter; `.to` returns a plain (non-leaf) tensor, so the attribute is not registered and the
state dict and `parameters()` are empty.
runs: on a CUDA machine `state_dict()` is empty (the attribute is a plain copy, not a registered parameter); on CPU `.to("cpu")` returns the parameter itself, it registers and the run prints ['par']
scope: documented
"""
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"


class Offset(nn.Module):
    def __init__(self):
        super().__init__()
        self.par = torch.nn.Parameter(torch.rand(5)).to(device)  # expect: GF303

    def forward(self, x):
        return x + self.par


a = Offset()
print(list(a.state_dict().keys()))
out = a(torch.randn(3, 5, device=device)).sum()
out.backward()
