# GF208 positive: the running totals add the loss tensor with its graph, and the
# code later calls tensor methods on them (`window.item()`, `(epoch_sum / n).detach()`).
# `.item()` would turn them into floats and make those calls raise, so the fix
# accumulates `loss.detach()`, which keeps a tensor without the graph.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
batches = [(torch.randn(6, 5), torch.randint(0, 2, (6,))) for _ in range(8)]

for epoch in range(3):
    window = 0
    epoch_sum = 0.0
    for i, (xb, yb) in enumerate(batches):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
        window += loss
        epoch_sum = epoch_sum + loss
        if i % 4 == 3:
            print(epoch, i, window.item() / 4)
            window = 0
    mean = (epoch_sum / len(batches)).detach().numpy()
    print(epoch, mean)
