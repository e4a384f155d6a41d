# GF101 positive in a module-level training loop: softmax saves its output,
# and adding an epsilon in place (`probs += 1e-8`) before the log makes
# backward raise. Rewrite: `probs = probs + 1e-8`.
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loader = [(torch.randn(32, 20), torch.randint(0, 5, (32,))) for _ in range(10)]

for epoch in range(3):
    for x, y in loader:
        opt.zero_grad()
        probs = torch.softmax(model(x), dim=1)
        probs = probs + 1e-8
        loss = -torch.log(probs.gather(1, y[:, None])).mean()
        loss.backward()
        opt.step()
