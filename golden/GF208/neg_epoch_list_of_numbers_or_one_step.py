# GF208 negative: per-epoch lists that hold no step's graph (the dict entry is
# stored as a number, or detached), and a list made for each optimizer step
# that collects its micro-batch losses: it is dropped when the step is taken.
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 1)

    def forward(self, x, y):
        pred = self.body(x)
        return {"pred": pred, "objective": nn.functional.l1_loss(pred, y)}


net = Regressor()
opt = torch.optim.SGD(net.parameters(), lr=0.05)
batches = [(torch.randn(8, 6), torch.randn(8, 1)) for _ in range(4)]
for epoch in range(2):
    as_numbers, as_detached = [], []
    for x, y in batches:
        result = net(x, y)
        opt.zero_grad()
        result["objective"].backward()
        opt.step()
        as_numbers.append(result["objective"].item())
        as_detached.append(result["objective"].detach())
    print(epoch, sum(as_numbers), torch.stack(as_detached).mean().item())

for x, y in batches:
    pieces = []
    opt.zero_grad()
    for xs, ys in zip(x.chunk(2), y.chunk(2)):
        part = net(xs, ys)
        part["objective"].backward()
        pieces.append(part["objective"])
    opt.step()
    print(len(pieces))
