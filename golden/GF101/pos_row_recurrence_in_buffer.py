import torch

n = 6
w = torch.randn(4, requires_grad=True)
h = torch.empty(n, 4)
h[0] = 0.1
for t in range(1, n):
    h[t] = torch.tanh(h[t - 1] * w + 1.0)
h[-1].sum().backward()
