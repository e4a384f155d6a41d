# GF101 positive through the call graph: `l2_normalize` divides its argument
# in place after norm() saved it. On its own the helper could be given
# anything; its only call site passes the encoder's output, which requires
# grad, so backward() raises.
import torch
import torch.nn as nn


def l2_normalize(v):
    v /= v.norm(dim=-1, keepdim=True)
    return v


encoder = nn.Linear(10, 6)
opt = torch.optim.SGD(encoder.parameters(), lr=0.1)
for batch in [torch.randn(4, 10) for _ in range(3)]:
    opt.zero_grad()
    emb = l2_normalize(encoder(batch))
    loss = emb.pow(2).sum()
    loss.backward()
    opt.step()
