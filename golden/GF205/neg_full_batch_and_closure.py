# GF205 negative: gradients accumulated over the whole loader with a single
# step after the loop; and LBFGS, whose closure clears them.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]

for epoch in range(5):
    optimizer.zero_grad()
    for x, y in loader:
        F.mse_loss(model(x), y, reduction="sum").backward()
    optimizer.step()

lbfgs = torch.optim.LBFGS(model.parameters())
x_all = torch.randn(64, 10)
y_all = torch.randn(64, 1)


def closure():
    lbfgs.zero_grad()
    loss = F.mse_loss(model(x_all), y_all)
    loss.backward()
    return loss


for i in range(20):
    lbfgs.step(closure)
