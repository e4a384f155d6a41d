# GF208 positive next to the numpy-array totals: here the total is an ndarray on one path only.
# When `keep_on_device` is set it starts as a torch tensor, and `+=` of the loss then chains every
# batch's graph into it; a total the loop itself rebinds to a torch tensor is no array either, and
# neither is a numpy scalar.
import numpy as np
import torch
import torch.nn as nn

keep_on_device = True
net = nn.Linear(5, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
crit = nn.CrossEntropyLoss()
batches = [(torch.randn(4, 5), torch.randint(0, 3, (4,))) for _ in range(3)]

if keep_on_device:
    total = torch.zeros(())
else:
    total = np.zeros(())
for feats, gold in batches:
    opt.zero_grad()
    loss = crit(net(feats), gold)
    loss.backward()
    opt.step()
    total += loss
print(float(total.detach()))

window = np.zeros(())
for step, (feats, gold) in enumerate(batches):
    opt.zero_grad()
    loss = crit(net(feats), gold)
    loss.backward()
    opt.step()
    if step == 0:
        window = torch.zeros(())
    window += loss
print(float(window.detach()))

# a numpy *scalar* is no array: `np.float64(0) + loss` is the tensor's own `__radd__`, a tensor with the graph
score = np.float64(0.0)
for feats, gold in batches:
    opt.zero_grad()
    loss = crit(net(feats), gold)
    loss.backward()
    opt.step()
    score += loss
print(float(score.detach()))
