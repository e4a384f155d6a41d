# GF303 positive: the constructor's arguments only give the sizes; the data is
# created here on the CPU (`torch.randn(nodes, rank)`), so `.to(device)` on a
# GPU copies the Parameter into a plain tensor that is never registered.
import torch
import torch.nn as nn


class NodeEmbedding(nn.Module):
    def __init__(self, nodes, rank, device):
        super().__init__()
        self.emb = nn.Parameter(torch.randn(nodes, rank).to(device))

    def forward(self):
        return self.emb @ self.emb.t()
