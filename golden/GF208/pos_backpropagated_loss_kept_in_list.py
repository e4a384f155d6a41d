# GF208 positive: the loop backpropagates each batch's loss and then keeps the
# loss tensor itself in a list created before the loop (and, in the second
# loop, a dict whose "loss" entry is the backpropagated tensor). The lists keep
# every iteration's loss alive with its autograd graph, so memory grows with
# the epoch; storing `.item()` is what was meant.
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

history = []
for step in range(50):
    x, y = torch.randn(32, 5), torch.randn(32, 1)
    opt.zero_grad()
    loss = nn.functional.smooth_l1_loss(model(x), y)
    loss.backward()
    opt.step()
    history.append(loss)

records = list()
for step in range(50):
    x, y = torch.randn(32, 5), torch.randn(32, 1)
    opt.zero_grad()
    result = {"loss": (model(x) - y).pow(2).mean(), "step": step}
    result["loss"].backward()
    opt.step()
    records.append(result)
