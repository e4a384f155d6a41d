"""The module fit again, but the printed number is folded into the loss that is backpropagated: `extra` is
bound in the same loop, after the model call, with `.item()`, and added to the loss as a smoothness term. That
term is a constant to autograd: it only changes the logged loss value, and it trains nothing."""
import math

import torch

x = torch.linspace(-math.pi, math.pi, 500)
y = torch.sin(x)
powers = x.unsqueeze(-1).pow(torch.tensor([1, 2, 3]))
model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
loss_fn = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
for t in range(300):
    pred = model(powers)
    extra = (pred[1:] - pred[:-1]).pow(2).sum().item()
    loss = loss_fn(pred, y) + 0.1 * extra
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
