# GF209 negative: a model of this file cast to bfloat16 at construction, then moved
# with a bare `.to(device)`. The receiver is a module (casts of a module return the
# module), and a module moves in place.
import torch
import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab, width):
        super().__init__()
        self.emb = nn.Embedding(vocab, width)
        self.out = nn.Linear(width, vocab)

    def forward(self, ids):
        return self.out(self.emb(ids))


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
for width in (16, 32):
    model = TinyLM(100, width).bfloat16()
    model.to(device)
    half = TinyLM(100, width).type(torch.float16)
    half.to(device)
    print(sum(p.numel() for p in model.parameters()), next(half.parameters()).dtype)
