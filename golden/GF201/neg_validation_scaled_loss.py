# GF201 negative: the large literal divisor is only used for the validation
# report under no_grad; the training loss that reaches backward is unscaled.
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1))
criterion = nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
train = [(torch.randn(16, 10), torch.randn(16, 1)) for _ in range(20)]
val = [(torch.randn(16, 10), torch.randn(16, 1)) for _ in range(5)]

for epoch in range(10):
    for x, y in train:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        val_loss = sum(criterion(model(x), y) for x, y in val) / 1000000
    print(f"epoch {epoch}: val loss {val_loss.item():.3e} (x1e6)")
