# GF205 negative: the gradients are cleared in a helper of this file, or by
# code gradfix cannot see that receives the optimizer.
import torch
import torch.nn as nn
import torch.nn.functional as F
from mytrainer import hooks

model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]


def reset(opt):
    opt.zero_grad(set_to_none=True)


for x, y in loader:
    F.mse_loss(model(x), y).backward()
    optimizer.step()
    reset(optimizer)

for x, y in loader:
    F.mse_loss(model(x), y).backward()
    optimizer.step()
    hooks.after_step(optimizer)
