"""A tutorial script (one notebook cell after another): first a cubic is fitted with plain tensors and
hand-written gradients, where `loss = (...).sum().item()` is only the printed number (no model, no backward);
then the same fit with a module, whose own loop binds `loss = loss_fn(...)` again before `loss.backward()`.
The first loop's `loss` never reaches that backward, so its `.item()` cuts nothing from the second loss."""
import math

import torch

x = torch.linspace(-math.pi, math.pi, 500)
y = torch.sin(x)

w0, w1, w2, w3 = (torch.randn(()) for _ in range(4))
rate = 1e-6
for t in range(300):
    pred = w0 + w1 * x + w2 * x ** 2 + w3 * x ** 3
    loss = (pred - y).pow(2).sum().item()
    if t % 100 == 99:
        print(t, loss)
    g = 2.0 * (pred - y)
    w0 -= rate * g.sum()
    w1 -= rate * (g * x).sum()
    w2 -= rate * (g * x ** 2).sum()
    w3 -= rate * (g * x ** 3).sum()

powers = x.unsqueeze(-1).pow(torch.tensor([1, 2, 3]))
model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
loss_fn = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
for t in range(300):
    pred = model(powers)
    loss = loss_fn(pred, y)
    if t % 100 == 99:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
