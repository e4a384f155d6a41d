# GF104 negative: `.data` appears only in metrics that never reach backward
# (`(out.data.argmax(1) == y)`, `running += loss.data`).
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(100, 64), nn.ReLU(), nn.Linear(64, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(64, 100), torch.randint(0, 10, (64,))) for _ in range(30)]

for epoch in range(3):
    running = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out, y)
        acc = (out.data.argmax(1) == y).float().mean()
        loss.backward()
        optimizer.step()
        running += loss.data
    print(epoch, float(running) / len(loader), acc.item())
