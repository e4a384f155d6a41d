# GF101 positive with `-=` and a non-atom right side: exp saves its output,
# so subtracting in place makes backward raise. The rewrite must still wrap
# the right side: `w = w - (w.mean(dim=1, keepdim=True) * 0.5)`.
import torch
import torch.nn as nn


class ExpAttentionPool(nn.Module):
    def __init__(self, dim=128):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, h):  # h: [B, T, D]
        w = torch.exp(self.score(h))
        w -= w.mean(dim=1, keepdim=True) * 0.5
        return (w * h).sum(dim=1) / w.sum(dim=1)
