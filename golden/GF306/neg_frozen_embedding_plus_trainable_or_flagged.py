# GF306 negative next to the frozen-embedding positive: a trainable position table is added
# to the frozen token output (the sum requires grad), one encoder passes use_reentrant=False,
# and one freezes its table only when asked to (a condition the file does not decide).
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class WithPositions(nn.Module):
    def __init__(self, vocab=40, width=16, length=6):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.tokens.requires_grad_(False)
        self.positions = nn.Parameter(torch.zeros(length, width))
        self.block = nn.Linear(width, width)

    def forward(self, ids):
        h = self.tokens(ids) + self.positions
        h = checkpoint(self.block, h)
        return h.mean(dim=1)


class Flagged(nn.Module):
    def __init__(self, vocab=40, width=16):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.tokens.requires_grad_(False)
        self.block = nn.Linear(width, width)

    def forward(self, ids):
        h = self.tokens(ids)
        h = checkpoint(self.block, h, use_reentrant=False)
        return h.mean(dim=1)


class Optional(nn.Module):
    def __init__(self, vocab=40, width=16, freeze=False):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        if freeze:
            self.tokens.requires_grad_(False)
        self.block = nn.Linear(width, width)

    def forward(self, ids):
        h = self.tokens(ids)
        h = checkpoint(self.block, h)
        return h.mean(dim=1)


if __name__ == "__main__":
    ids = torch.randint(0, 40, (3, 6))
    for net in (WithPositions(), Flagged(), Optional()):
        net(ids).sum().backward()
    print("ok")
