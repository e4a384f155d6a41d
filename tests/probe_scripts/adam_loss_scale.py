"""Adam on a loss multiplied by 1e-10: the gradients sit below eps, which then dominates every update."""
import torch
import torch.nn as nn

torch.manual_seed(1)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(5):
    x, y = torch.randn(32, 10), torch.randn(32, 1)
    opt.zero_grad()
    mse = nn.functional.mse_loss(model(x), y)
    loss = mse * 1e-10
    loss.backward()
    opt.step()
