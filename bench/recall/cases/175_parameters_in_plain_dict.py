"""Source: https://github.com/pytorch/pytorch/issues/10817
Title: Parameters in dict not registered
What went wrong: a module keeps one `nn.Parameter` in a plain dict attribute next to a directly
assigned one; `named_parameters()` lists only the direct one, so the optimizer never updates the
parameter in the dict (the answer points to `register_parameter` / `nn.ParameterDict`).
runs: trains `p`; the dict's parameter is never given to the optimizer and keeps its value
scope: documented
"""
import torch
import torch.nn as nn


class Bilinear(nn.Module):
    def __init__(self, n=3):
        super().__init__()
        self.d = dict()  # expect: GF304
        self.d["d"] = nn.Parameter(torch.randn(n, n))
        self.p = nn.Parameter(torch.randn(n, n))

    def forward(self, x):
        return (x @ self.d["d"] @ self.p).sum(dim=1)


model = Bilinear()
print([name for name, _ in model.named_parameters()])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loss = model(torch.randn(4, 3)).pow(2).mean()
loss.backward()
optimizer.step()
