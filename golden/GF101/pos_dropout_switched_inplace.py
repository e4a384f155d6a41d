# GF101 positive: the attention block builds an ordinary Dropout and then turns
# it in place with `self.attn_drop.inplace = True`; applied to the softmax
# weights, which softmax keeps for its backward, it overwrites them and
# backward() raises in training mode. Detect only: drop the switch.
import torch
import torch.nn as nn


class TinyAttention(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.attn_drop = nn.Dropout(0.2)
        self.attn_drop.inplace = True

    def forward(self, x):
        scores = self.q(x) @ self.k(x).transpose(1, 2)
        weights = torch.softmax(scores / 8 ** 0.5, dim=-1)
        weights = self.attn_drop(weights)
        return weights @ x


if __name__ == "__main__":
    TinyAttention().train()(torch.randn(2, 5, 8)).sum().backward()
