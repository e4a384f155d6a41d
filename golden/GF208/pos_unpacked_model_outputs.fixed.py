# GF208 positive with a model that returns two outputs: `out, aux = model(x)`
# unpacks them, and every loss built from either carries the graph. Summing
# the recomputed criterion or the combined loss into a running total keeps
# every iteration's graph alive. Fix: accumulate `.item()`.
import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(12, 16)
        self.main = nn.Linear(16, 3)
        self.side = nn.Linear(16, 3)

    def forward(self, x):
        h = torch.tanh(self.trunk(x))
        return self.main(h), self.side(h)


model = TwoHeads()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loader = [(torch.randn(8, 12), torch.randint(0, 3, (8,))) for _ in range(12)]

for epoch in range(4):
    running_main = 0.0
    running_total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        out, aux = model(x)
        loss = F.cross_entropy(out, y) + 0.3 * F.cross_entropy(aux, y)
        (loss / 2).backward()
        optimizer.step()
        running_main += criterion(out, y).item()
        running_total += loss.item()
    print(epoch, float(running_main), float(running_total))
