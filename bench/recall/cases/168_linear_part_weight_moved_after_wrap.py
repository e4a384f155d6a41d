"""Source: https://github.com/shenweichen/DeepCTR-Torch/issues/87
Title: Linear model weight parameters (CUDA) are not included in state_dict()
What went wrong: the linear part of the CTR model creates its dense-feature weight as
`nn.Parameter(...).to(device)`; on a GPU `.to` returns a plain tensor copy, so the weight is not
registered: it is missing from `state_dict()` and from the optimizer.
runs: on a CUDA machine `weight` is not in `state_dict()` or `parameters()`; on CPU `.to("cpu")` returns the Parameter itself and it is registered
scope: documented
"""
import torch
import torch.nn as nn


class Linear(nn.Module):
    def __init__(self, n_sparse=10, emb_dim=1, dense_dim=4, init_std=1e-4, device="cpu"):
        super().__init__()
        self.embedding = nn.Embedding(n_sparse, emb_dim)
        self.weight = nn.Parameter(torch.Tensor(dense_dim, 1)).to(device)  # expect: GF303
        nn.init.normal_(self.weight, mean=0, std=init_std)

    def forward(self, sparse_ids, dense_x):
        return self.embedding(sparse_ids).sum(dim=1) + dense_x @ self.weight


if __name__ == "__main__":
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    linear = Linear(device=dev).to(dev)
    print(sorted(linear.state_dict().keys()))
    out = linear(torch.randint(0, 10, (3, 2), device=dev), torch.randn(3, 4, device=dev))
    print(out.shape)
