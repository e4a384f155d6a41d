# GF101 negative: splits whose pieces are never written in place while they are
# views that require grad: a clone before the clamp, a split of a detached copy
# (nothing there requires grad), and a `tensor_split`, whose pieces may be
# modified in place. It runs without error.
import torch
import torch.nn as nn


class TwoHeads(nn.Module):
    def __init__(self, features=8):
        super().__init__()
        self.proj = nn.Linear(features, 4)
        self.side = nn.Linear(features, 4)

    def forward(self, h):
        loc, spread = self.proj(h).chunk(2, dim=1)
        spread = spread.clone()
        spread.clamp_(min=-3.0)
        left, right = torch.tensor_split(self.side(h), 2, dim=1)
        right.add_(1.0)
        return loc + spread + left + right

    def shown(self, h):
        low, high = self.proj(h).detach().split(2, dim=1)
        high.mul_(10.0)
        return low, high


if __name__ == "__main__":
    heads = TwoHeads()
    heads(torch.randn(5, 8)).sum().backward()
    print(heads.shown(torch.randn(2, 8))[1].shape)
