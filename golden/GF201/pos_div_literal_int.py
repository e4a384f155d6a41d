# GF201 positive: the whole loss is divided by a literal 100000 before
# backward (the second seed's pattern with a smaller factor): every gradient
# shrinks 1e5 times and gradient clipping never triggers.
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(30, 64), nn.ReLU(), nn.Linear(64, 1))
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = [(torch.randn(16, 30), torch.randint(0, 2, (16, 1)).float()) for _ in range(25)]

for epoch in range(10):
    total_loss = 0.0
    for inputs, targets in loader:
        optimizer.zero_grad()
        logits = model(inputs)
        loss = criterion(logits, targets) / 100000
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        total_loss += loss.item()
    print(f"epoch {epoch}: {total_loss / len(loader):.6f}")
