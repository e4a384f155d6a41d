"""Source: https://github.com/facebookresearch/3detr/issues/55
Title: RuntimeError: ReluBackward0, is at version 1; expected version 0 instead
What went wrong: a feed-forward block applies `nn.Dropout(inplace=True)` to a ReLU output;
the in-place dropout overwrites what ReLU saved, and removing `inplace=True` fixed it.
runs: raises RuntimeError (ReluBackward0 ... is at version 1) in backward()
scope: extension (in-place module, not an in-place tensor method)
"""
import torch
import torch.nn as nn


class FFN(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.lin1 = nn.Linear(d, 32)
        self.act = nn.ReLU()
        self.drop = nn.Dropout(0.1, inplace=True)
        self.lin2 = nn.Linear(32, d)

    def forward(self, x):
        h = self.act(self.lin1(x))
        h = self.drop(h)  # expect: GF101
        return self.lin2(h)


if __name__ == "__main__":
    ffn = FFN()
    ffn.train()
    ffn(torch.randn(4, 16)).pow(2).mean().backward()
