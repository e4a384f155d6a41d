# GF202 positive under AMP: ExponentialLR(gamma=0.95) is an epoch decay; stepped
# after every `scaler.step` it multiplies the learning rate by 0.95 per batch
# (0.95 ** 500 = 7e-12 after five epochs of 100 batches).
import torch
import torch.nn as nn
import torch.nn.functional as F

device = "cuda"
model = nn.Linear(128, 10).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.95)
scaler = torch.amp.GradScaler("cuda")
loader = [(torch.randn(16, 128), torch.randint(0, 10, (16,))) for _ in range(100)]

for epoch in range(5):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    torch.save(model.state_dict(), f"ckpt_{epoch}.pt")
    scheduler.step()
