# GF204 positive: gradient accumulation over `k` batches where the clear and
# the step are guarded by the same test. On the batches that step, the clear at
# the top of the iteration wipes the k - 1 gradients gathered since the last
# step, then backward() adds this batch alone, and the step uses only that.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
k = 4
loader = [(torch.randn(8, 10), torch.randint(0, 2, (8,))) for _ in range(16)]

for i, (x, y) in enumerate(loader):
    if (i + 1) % k == 0:
        opt.zero_grad()
    loss = F.cross_entropy(model(x), y) / k
    loss.backward()
    if (i + 1) % k == 0:
        opt.step()
