# GF104 positive under AMP: the sparsity penalty reads `.data` and is added to
# the loss that goes through `scaler.scale(loss).backward()`.
import torch
import torch.nn as nn
import torch.nn.functional as F


def sparsity_penalty(layer, lam=1e-3):
    return lam * layer.weight.abs().mean()


device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 8)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
scaler = torch.amp.GradScaler(device)

for step in range(200):
    x = torch.randn(32, 64, device=device)
    y = torch.randint(0, 8, (32,), device=device)
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device, dtype=torch.bfloat16):
        logits = model(x)
        loss = F.cross_entropy(logits, y) + sparsity_penalty(model[0])
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
