# GF212 positive: the model is called with gradients on twice, but neither call
# can reach backward(): one result is never read, and the other call sits in a
# loop over range(1, steps) with steps = 1, which never runs. The only output
# that reaches the loss was computed under no_grad.
import torch
import torch.nn as nn
import torch.nn.functional as F

clf = nn.Linear(10, 4)
opt = torch.optim.SGD(clf.parameters(), lr=0.1)
steps = 1
xs, ys = torch.randn(6, 10), torch.randint(0, 4, (6,))

warm = F.cross_entropy(clf(xs), ys)
totals = [0.0, 0.0]
with torch.no_grad():
    totals[1] = totals[1] + F.cross_entropy(clf(xs), ys)
for k in range(1, steps):
    totals[k + 1] = totals[k + 1] + F.cross_entropy(clf(xs), ys)
final = totals[-1]
opt.zero_grad()
final.backward()
opt.step()
