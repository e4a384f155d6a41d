# GF209 negative: statements that look like discarded values but act by side
# effect (or on non-tensors): set.add, in-place methods, requires_grad_,
# retain_grad, optimizer and logger methods.
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
seen = set()
seen.add(1)
x = torch.randn(3, 4, requires_grad=True)
h = model(x)
h.retain_grad()
x.requires_grad_()
optimizer.add_param_group({"params": [torch.zeros(2, requires_grad=True)]})
with torch.no_grad():
    for p in model.parameters():
        p.add_(1.0)
        p.clamp_(-1, 1)
counts = {}
counts.update({"a": 1})
