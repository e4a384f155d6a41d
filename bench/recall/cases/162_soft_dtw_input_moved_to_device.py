"""Source: https://github.com/toinsson/pysdtw/issues/2
Title: Gradients are gone when moving the code to CUDA
What went wrong: the example makes the input sequences with `requires_grad=True` on the CPU
and then moves them with `.to(device)`; the moved tensor is a non-leaf copy, so after
backward() `X.grad` is empty and PyTorch warns about reading `.grad` of a non-leaf.
runs: on a CUDA machine `X.grad` is None with a non-leaf warning; on CPU `.to("cpu")` returns the same tensor and the gradient is there
scope: documented
"""
import torch


def pairwise_l2_squared(x, y):
    return (x.unsqueeze(2) - y.unsqueeze(1)).pow(2).sum(-1)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
X = torch.rand((10, 5, 7), requires_grad=True).to(device)  # expect: GF302
Y = torch.rand((10, 9, 7)).to(device)

D = pairwise_l2_squared(X, Y)
soft_min = -torch.logsumexp(-D / 1.0, dim=2)
loss = soft_min.sum()
loss.backward()
print(X.grad is None)
