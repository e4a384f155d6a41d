# GF210 negative: every weight of the base model is frozen, then a helper wraps each
# Linear in an adapter with new, trainable weights before the optimizer is built
# over `model.parameters()`. The adapters are what trains.
import torch
import torch.nn as nn


class LowRank(nn.Module):
    def __init__(self, inner, rank):
        super().__init__()
        self.inner = inner
        self.down = nn.Linear(inner.in_features, rank, bias=False)
        self.up = nn.Linear(rank, inner.out_features, bias=False)
        nn.init.zeros_(self.up.weight)

    def forward(self, x):
        return self.inner(x) + self.up(self.down(x))


def add_low_rank(module, rank):
    for name, child in module.named_children():
        if isinstance(child, nn.Linear):
            setattr(module, name, LowRank(child, rank))
        else:
            add_low_rank(child, rank)


model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
for p in model.parameters():
    p.requires_grad = False
add_low_rank(model, rank=2)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
