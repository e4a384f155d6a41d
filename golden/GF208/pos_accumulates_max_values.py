# GF208 positive: `torch.max(probs, 1)` returns the largest probabilities and
# their indices; `[0]` is the probabilities, which keep the model's graph. The
# running confidence total therefore holds every batch's graph alive, unlike an
# accuracy made from the indices (`[1]`). No fix is offered: the added value is
# not the loss itself.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(8, 3)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [(torch.randn(10, 8), torch.randint(0, 3, (10,))) for _ in range(5)]

for epoch in range(3):
    confidence = 0
    for x, y in batches:
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        confidence += torch.max(F.softmax(logits, dim=1), 1)[0].mean()
    print(epoch, confidence.requires_grad)
