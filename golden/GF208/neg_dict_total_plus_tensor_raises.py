import torch
import torch.nn as nn

widths = [0.5, 1.0]
model = nn.Linear(6, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(3)]


def train_epoch(aux_weight=0.0):
    # a dict of per-width sums: `side += aux` raises TypeError when the branch runs, so it holds no graph
    # (a bug of another kind; `.item()` would not make the line run either)
    side = {"w%s" % w: 0.0 for w in widths}
    for x, y in batches:
        out = model(x)
        loss = nn.functional.cross_entropy(out, y)
        if aux_weight > 0:
            aux = aux_weight * out.pow(2).mean()
            side += aux
            loss = loss + aux
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return side
