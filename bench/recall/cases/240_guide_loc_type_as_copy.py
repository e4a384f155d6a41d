"""Source: https://github.com/pyro-ppl/pyro/pull/970
Title: Fix bayesian regression example and re-enable testing
What went wrong: the variational guide creates its location parameter with
`torch.randn(1, p, requires_grad=True).type_as(data)`; the `type_as` copy comes after the flag, so
the name holds a non-leaf and the optimised leaf is unreachable (the fix creates the tensor, casts
it, and only then sets `requires_grad = True`).
runs: runs; with float64 data `weight_loc` is not a leaf, its .grad stays None after backward, and an optimizer over it raises "can't optimize a non-leaf Tensor" (the run prints all three)
scope: extension
"""
import torch

n_features = 4
observed = torch.randn(30, n_features + 1, dtype=torch.float64)
features, target = observed[:, :n_features], observed[:, n_features]
weight_loc = torch.randn(n_features, requires_grad=True).type_as(observed)  # expect: GF302
bias_loc = torch.zeros(1, dtype=torch.float64, requires_grad=True)
residual = features @ weight_loc + bias_loc - target
residual.pow(2).mean().backward()
print(weight_loc.is_leaf, weight_loc.grad)
try:
    torch.optim.Adam([weight_loc, bias_loc], lr=0.05)
except ValueError as err:
    print(err)
