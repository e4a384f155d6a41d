# GF208 negative: tuple unpacking that carries no graph into the totals. The
# batch is unpacked (`x, mask, y = batch`), counts and argmax predictions are
# plain numbers, and the unpacked model outputs are accumulated with `.item()`.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(10, 5)

    def forward(self, x):
        logits = self.proj(x)
        return logits, logits.softmax(-1)


model = Tagger()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [(torch.randn(6, 10), torch.ones(6), torch.randint(0, 5, (6,))) for _ in range(8)]

for epoch in range(2):
    seen_tokens = 0
    correct = 0
    total_loss = 0.0
    for batch in batches:
        x, mask, y = batch
        optimizer.zero_grad()
        logits, probs = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        optimizer.step()
        seen_tokens += mask.sum()
        _, predicted = probs.max(dim=1)
        correct += (predicted == y).sum().item()
        total_loss += F.cross_entropy(logits, y).item()
    print(seen_tokens, correct, total_loss)
