"""Source: https://github.com/laekov/fastmoe/issues/49
Title: Balance loss is not optimized
What went wrong: the mixture-of-experts layers each return a load-balancing loss, and the
training step gathers them with `torch.tensor(loss_list)`; that copies the values into a new leaf
tensor without `grad_fn`, so the balance term adds to the reported loss but sends no gradient to
the gates (the fix uses `torch.cat`/`torch.stack`).
runs: trains; torch warns "Converting a tensor with requires_grad=True to a scalar", and the balance term sends no gradient to the gates
scope: documented
"""
import torch
import torch.nn as nn


class MoELayer(nn.Module):
    def __init__(self, dim=8, experts=4):
        super().__init__()
        self.gate = nn.Linear(dim, experts)
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(experts))

    def forward(self, x):
        probs = self.gate(x).softmax(-1)
        out = sum(probs[:, i : i + 1] * e(x) for i, e in enumerate(self.experts))
        balance = (probs.mean(0) ** 2).sum() * len(self.experts)
        return out, balance


layers = nn.ModuleList(MoELayer() for _ in range(2))
optimizer = torch.optim.Adam(layers.parameters(), lr=1e-3)
x, y = torch.randn(6, 8), torch.randn(6, 8)
loss_list = []
for layer in layers:
    x, balance = layer(x)
    loss_list.append(balance)
balance_loss = torch.tensor(loss_list).mean()  # expect: GF307
loss = nn.functional.mse_loss(x, y) + 0.01 * balance_loss
optimizer.zero_grad()
loss.backward()
optimizer.step()
