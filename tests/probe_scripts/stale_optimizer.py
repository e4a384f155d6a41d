"""The optimizer is built, then the model is rebuilt: the optimizer steps parameters no forward uses."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))  # re-initialised for the run
for _ in range(5):
    x, y = torch.randn(16, 5), torch.randn(16, 1)
    opt.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    opt.step()
