# GF208 positive: the total is returned, and the only caller prints it: a float works there, so the fix
# is `.item()`.
import torch
from torch import nn


def run_epoch(net, batches, loss_fn, opt):
    total = 0.0
    for inputs, targets in batches:
        loss = loss_fn(net(inputs), targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    return total / len(batches)


net = nn.Linear(6, 1)
batches = [(torch.randn(5, 6), torch.randn(5, 1)) for _ in range(4)]
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for epoch in range(3):
    mean_loss = run_epoch(net, batches, nn.MSELoss(), opt)
    print(f"epoch {epoch}: {mean_loss:.4f}")
