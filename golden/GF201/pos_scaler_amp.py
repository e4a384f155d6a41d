# GF201 positive under AMP: the loss divided by 1e6 is what `scaler.scale(...)`
# receives. In fp16 most gradients would underflow even with the scaler.
import torch
import torch.nn as nn
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(512, 512), nn.GELU(), nn.Linear(512, 2)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
scaler = torch.amp.GradScaler(device)

for step in range(500):
    x = torch.randn(32, 512, device=device)
    y = torch.randint(0, 2, (32,), device=device)
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device, dtype=torch.bfloat16):
        logits = model(x)
        loss = F.cross_entropy(logits, y) / 1e6
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
