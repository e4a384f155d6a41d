# GF306 positive: the token table is frozen in __init__ and its output is the first input the
# checkpointed blocks see. No input requires grad, so the reentrant default builds no graph:
# the blocks' output does not require grad and backward() raises.
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class TextEncoder(nn.Module):
    def __init__(self, vocab=40, width=16, depth=2):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.tokens.requires_grad_(False)
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(width, width), nn.Tanh()) for _ in range(depth))

    def forward(self, ids):
        h = self.tokens(ids)
        for block in self.blocks:
            h = checkpoint(block, h)
        return h.mean(dim=1)


if __name__ == "__main__":
    enc = TextEncoder()
    enc(torch.randint(0, 40, (3, 6))).sum().backward()
