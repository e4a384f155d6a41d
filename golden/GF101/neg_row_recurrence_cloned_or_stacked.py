import torch

n = 6
w = torch.randn(4, requires_grad=True)

# each step reads a copy of the previous row: the product saves the copy, not a view of `h`
h = torch.empty(n, 4)
h[0] = 0.1
for t in range(1, n):
    h[t] = torch.tanh(h[t - 1].clone() * w + 1.0)
h[-1].sum().backward()

# rows kept in a list and stacked once at the end: nothing is written in place
rows = [torch.full((4,), 0.1)]
for t in range(1, n):
    rows.append(torch.tanh(rows[-1] * w + 1.0))
torch.stack(rows).sum().backward()

# an index tensor selects a copy (advanced indexing): the saved tensor is not a view of `g`
g = torch.zeros(n, 4)
idx = torch.tensor([0])
for t in range(1, n):
    y = g[idx] * w
    g[t] = 2.0
y.sum().backward()
