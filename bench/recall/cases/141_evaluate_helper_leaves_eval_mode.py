"""Source: https://github.com/shubhamagarwal92/mmd/issues/14
Title: model.eval() in train.py
What went wrong: the training script's `evaluate` helper calls `model.eval()` to switch off
dropout, but nothing calls `model.train()` afterwards, so after the first evaluation every
later epoch trains with dropout disabled.
runs: trains; from the second epoch on `model.training` is False during the batch loop
scope: documented
"""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Embedding(100, 16), nn.Flatten(), nn.Dropout(0.3), nn.Linear(16 * 5, 100))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()


def evaluate(model, batches):
    model.eval()
    with torch.no_grad():
        return sum(criterion(model(x), y).item() for x, y in batches) / len(batches)


train_batches = [(torch.randint(0, 100, (8, 5)), torch.randint(0, 100, (8,))) for _ in range(4)]
valid_batches = train_batches[:2]
model.train()
for epoch in range(3):
    for x, y in train_batches:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    print(epoch, evaluate(model, valid_batches))  # expect: GF211
