# GF211 positive: the eval call sits in a branch, but the train call that should undo
# it is guarded by `step == 0`, so it runs on the first batch only. After the first
# probe every later optimizer step trains with dropout off and batch norm frozen.
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
batches = [(torch.randn(8, 10), torch.randint(0, 2, (8,))) for _ in range(10)]

for step, (x, y) in enumerate(batches):
    if step == 0:
        net.train()
        out = net(x)
    else:
        out = net(x)
    loss = F.cross_entropy(out, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 4 == 3:
        net.eval()
        with torch.no_grad():
            print(net(x).argmax(1))
