"""Source: https://github.com/pytorch/executorch/pull/14543
Title: Leverage __call__ impl of nn Module instead of calling forward on attention
What went wrong: a transformer block calls its attention implementation through
`self.attention.forward(...)`, which bypasses `register_forward_hook`; hooks added for
profiling never ran. The fix calls the module.
runs: a forward hook on the attention module is never called
scope: documented
"""
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        w = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1)
        return self.proj(w @ v)


class TransformerBlock(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.attention_norm = nn.LayerNorm(dim)
        self.attention = Attention(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = x + self.attention.forward(self.attention_norm(x))  # expect: GF305
        return h + self.ffn(h)


if __name__ == "__main__":
    block = TransformerBlock()
    calls = []
    block.attention.register_forward_hook(lambda m, i, o: calls.append(1))
    block(torch.randn(2, 5, 16))
    print(len(calls))
