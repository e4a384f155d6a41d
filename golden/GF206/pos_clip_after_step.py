# GF206 positive: the clip runs after the optimizer step, so the update used
# the unclipped gradients; the clipped ones are cleared by the next zero_grad().
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.LSTM(32, 64, batch_first=True)
head = nn.Linear(64, 10)
params = list(model.parameters()) + list(head.parameters())
optimizer = torch.optim.SGD(params, lr=1.0)
loader = [(torch.randn(4, 20, 32), torch.randint(0, 10, (4,))) for _ in range(50)]

for epoch in range(20):
    for x, y in loader:
        optimizer.zero_grad()
        out, _ = model(x)
        loss = F.cross_entropy(head(out[:, -1]), y)
        loss.backward()
        optimizer.step()
        torch.nn.utils.clip_grad_norm_(params, max_norm=0.25)
