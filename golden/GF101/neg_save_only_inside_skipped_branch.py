# GF101 negative: the only op that saves `emb` sits inside the `if` that the
# path to `+=` goes around. With `normalize` off, `emb` is a linear layer's
# output that nothing kept; with it on, `emb` is rebound to the quotient, which
# autograd does not keep either. Both settings train.
import torch
import torch.nn as nn


class Embedder(nn.Module):
    def __init__(self, size=6, normalize=False):
        super().__init__()
        self.normalize = normalize
        self.lin = nn.Linear(size, size)

    def forward(self, x):
        emb = self.lin(x)
        if self.normalize:
            emb = emb / emb.norm(dim=1, keepdim=True)
        emb += x
        return emb


for flag in (False, True):
    Embedder(normalize=flag)(torch.randn(3, 6)).square().sum().backward()
