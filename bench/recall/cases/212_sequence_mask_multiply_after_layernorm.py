"""Source: https://github.com/orion-orion/FedDCSR/issues/3
Title: In-place operation in SelfAttention causing backward pass error
What went wrong: the self-attention encoder multiplies the item-sequence tensor by the padding mask
in place (`seqs *= ~mask.unsqueeze(-1)`) after a LayerNorm has taken that tensor as its input;
LayerNorm saved it for backward, and backward() fails in NativeLayerNormBackward0 (the reporter's
fix is `seqs = seqs * ~mask.unsqueeze(-1)`).
runs: raises RuntimeError "one of the variables needed for gradient computation has been modified by an inplace operation" in backward() (the saved tensor is output 0 of Mul, the scaled embedding)
scope: documented
"""
import torch
import torch.nn as nn


class SelfAttentionEncoder(nn.Module):
    def __init__(self, n_items=30, dim=16):
        super().__init__()
        self.item_emb = nn.Embedding(n_items, dim, padding_idx=0)
        self.attn_norm = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.out_norm = nn.LayerNorm(dim)

    def forward(self, items):
        pad = items == 0
        seqs = self.item_emb(items) * self.item_emb.embedding_dim ** 0.5
        q = self.attn_norm(seqs)
        seqs *= ~pad.unsqueeze(-1)  # expect: GF101
        h, _ = self.attn(q, seqs, seqs)
        return self.out_norm(q + h)


enc = SelfAttentionEncoder()
items = torch.randint(0, 30, (4, 7))
scores = enc(items)[:, -1] @ enc.item_emb.weight.t()
loss = nn.functional.cross_entropy(scores, torch.randint(1, 30, (4,)))
loss.backward()
