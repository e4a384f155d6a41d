"""Source: https://github.com/huggingface/trl/pull/1921
Title: `torch.cuda.amp.autocast()` -> `torch.amp.autocast("cuda")`
What went wrong: the trainer runs its forward pass under `torch.cuda.amp.autocast()`, deprecated
in torch 2.4; each training step prints a FutureWarning (the pull request replaces it with
`torch.amp.autocast("cuda")`).
runs: trains; torch 2.13 prints the FutureWarning for torch.cuda.amp.autocast
scope: documented
"""
import torch
import torch.nn as nn
from torch.cuda.amp import autocast


class ValueHead(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.summary = nn.Linear(dim, 1)

    def forward(self, hidden):
        return self.summary(hidden).squeeze(-1)


backbone = nn.Embedding(40, 16)
v_head = ValueHead()
optimizer = torch.optim.Adam(list(backbone.parameters()) + list(v_head.parameters()), lr=1e-4)
for step in range(3):
    ids, returns = torch.randint(0, 40, (2, 6)), torch.randn(2, 6)
    with autocast():  # expect: GF301
        values = v_head(backbone(ids))
    loss = nn.functional.mse_loss(values.float(), returns)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
