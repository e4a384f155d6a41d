"""GF208 positive: the running total is set back to 0 in one branch of an `if` and the loss is added in the
other: the reset and the sum share a statement but never the same pass, so between two resets the total
chains the graphs of the nine batches added in the `else`."""
import torch
import torch.nn as nn

net = nn.Linear(6, 1)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
data = [(torch.randn(5, 6), torch.randn(5, 1)) for _ in range(40)]

window = 0.0
for step, (x, y) in enumerate(data):
    loss = nn.functional.mse_loss(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print("window", float(window))
        window = 0.0
    else:
        window += loss.item()
