# GF201 negative: PINN-style term weights. `physics_loss /= 1e6` and
# `1e-4 * bc_loss` scale single terms; the loss that reaches backward is the
# sum of the terms.
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
x_data, u_data = torch.rand(100, 2), torch.rand(100, 1)
x_bc = torch.rand(50, 2) * torch.tensor([0.0, 1.0])

for it in range(5000):
    x_col = torch.rand(1000, 2, requires_grad=True)
    u = net(x_col)
    du = torch.autograd.grad(u.sum(), x_col, create_graph=True)[0]
    residual = du[:, 1:2] + u * du[:, 0:1]
    physics_loss = (residual ** 2).mean()
    physics_loss /= 1e6
    data_loss = ((net(x_data) - u_data) ** 2).mean()
    bc_loss = (net(x_bc) ** 2).mean()
    loss = data_loss + physics_loss + 1e-4 * bc_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
