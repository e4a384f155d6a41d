"""The loop never clears the gradients: each step adds up every earlier batch's gradient."""
import torch
import torch.nn as nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(5):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    opt.step()
