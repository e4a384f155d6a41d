# GF204 negative: accumulation windows cleared at their start, which is right.
# - the first loop clears when a window opens (`i % k == 0`) and steps when it
#   closes (`(i + 1) % k == 0`): two different tests;
# - the second uses the same test text twice, but the counter moves between
#   the two ifs (`seen += 1`), so the clear runs at the start of a window and the
#   step at its end.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
k = 4
loader = [(torch.randn(8, 10), torch.randint(0, 2, (8,))) for _ in range(16)]

for i, (x, y) in enumerate(loader):
    if i % k == 0:
        opt.zero_grad()
    loss = F.cross_entropy(model(x), y) / k
    loss.backward()
    if (i + 1) % k == 0:
        opt.step()

seen = 0
for x, y in loader:
    if seen % k == 0:
        opt.zero_grad()
    (F.cross_entropy(model(x), y) / k).backward()
    seen += 1
    if seen % k == 0:
        opt.step()
