# GF208 negative: running totals of sample counts and of loss.item() weighted by
# the batch size. The batch is moved to the device and its size is used to slice
# the target, so both sit in the loss's slice, but they are data and ints: no
# graph is kept.
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
ref = torch.randn(16, 2)


def train(loader, device="cpu"):
    seen, running = 0, 0.0
    for x in loader:
        x = x.to(device)
        n = len(x)
        opt.zero_grad()
        loss = ((model(x) - ref[:n]) ** 2).mean()
        loss.backward()
        opt.step()
        seen += n
        running += loss.item() * x.size(0)
    return running / max(seen, 1)
