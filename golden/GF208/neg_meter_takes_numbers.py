# GF208 negative: meters that do not keep the graph. The loss goes in as a
# number (`.item()`), or the meter converts what it gets itself, or only keeps
# the latest value; a meter of accuracy (not a term of the loss) is a tensor
# without a graph. A meter whose class is not in this file is not guessed at.
import torch
import torch.nn as nn
from mylib.meters import ExternalMeter


class Meter:
    def __init__(self):
        self.sum = 0.0
        self.count = 0
        self.last = None

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    def update_any(self, val, n=1):
        if torch.is_tensor(val):
            val = val.item()
        self.sum += val * n
        self.count += n

    def latest(self, val):
        self.last = val


model = nn.Linear(4, 2)
opt = torch.optim.Adam(model.parameters())
losses = Meter()
acc = Meter()
raw = Meter()
ext = ExternalMeter()
data = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(4)]

for x, y in data:
    opt.zero_grad()
    out = model(x)
    loss = nn.functional.cross_entropy(out, y)
    loss.backward()
    opt.step()
    losses.update(loss.item(), x.size(0))
    acc.update((out.argmax(1) == y).float().mean())
    raw.update_any(loss)
    raw.latest(loss)
    ext.update(loss)
