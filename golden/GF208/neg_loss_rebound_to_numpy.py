"""After the step the loss name is rebound to a numpy value (`loss = loss.detach().cpu().numpy()`), so the
running total adds an array scalar: no graph is kept."""
import torch
import torch.nn as nn

net = nn.Linear(8, 1)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
running = 0
for it in range(12):
    pred = net(torch.randn(16, 8))
    loss = (pred - 1.0).abs().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    loss = loss.detach().cpu().numpy()
    running += loss
print("mean loss", running / 12)
