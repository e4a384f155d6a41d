"""Source: https://github.com/pytorch/pytorch/issues/35990
Title: [JIT] Tensor method API behavior discrepancy, Tensor.detach(..)
What went wrong: the report relies on `b = a.detach(); b -= c` changing `a` as well, since the
detached tensor shares storage; when `a` is an activation that autograd saved, the in-place
`-=` on the detached copy silently changes `a` and breaks its backward.
runs: raises RuntimeError (modified by an inplace operation) in backward(); `feat` itself was decremented
scope: documented
"""
import torch
import torch.nn as nn

proj = nn.Linear(8, 8)
x = torch.randn(4, 8)
feat = torch.sigmoid(proj(x))
centered = feat.detach()
centered -= centered.mean(dim=0, keepdim=True)  # expect: GF102
print("feat changed too:", torch.allclose(feat, centered))
loss = (feat * 2).sum() + centered.pow(2).sum()
loss.backward()
