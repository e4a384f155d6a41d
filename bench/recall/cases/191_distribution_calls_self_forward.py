"""Source: https://github.com/masa-su/pixyz/pull/123
Title: Fix/call module
What went wrong: the probabilistic-model library's distribution module computes its parameters by
calling `self.forward(**inputs)` from its own methods, so forward hooks registered on the
distribution never run; the fix calls the module (`__call__`) instead.
runs: samples and trains; a forward hook registered on the distribution is never called (the run prints 0 calls)
scope: extension
notes: left (branch r13). `self.forward(...)` from another method of the same module is written on purpose in library code: `grep -rn 'self.forward(' --include='*.py'` over the five pinned libraries (transformers, diffusers, accelerate, pytorch-lightning, torchvision) finds 18 such calls (loss modules, pipelines, wrappers); accelerate's hooks replace `forward` itself, so they still run. Reporting the form would flag that code; the tree cannot tell a class whose users register forward hooks.
"""
import torch
import torch.nn as nn


class Normal(nn.Module):
    def __init__(self, x_dim=4, z_dim=2):
        super().__init__()
        self.fc = nn.Linear(x_dim, 2 * z_dim)

    def forward(self, x):
        loc, log_scale = self.fc(x).chunk(2, dim=-1)
        return {"loc": loc, "scale": log_scale.exp()}

    def get_params(self, x):
        return self.forward(x)  # expect: GF305

    def sample(self, x):
        params = self.get_params(x)
        return params["loc"] + params["scale"] * torch.randn_like(params["loc"])


q = Normal()
calls = []
q.register_forward_hook(lambda module, inputs, output: calls.append(1))
optimizer = torch.optim.Adam(q.parameters(), lr=1e-3)
loss = q.sample(torch.randn(8, 4)).pow(2).mean()
loss.backward()
optimizer.step()
print(len(calls))
