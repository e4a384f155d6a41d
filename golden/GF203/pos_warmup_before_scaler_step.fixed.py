# GF203 positive under AMP: the warm-up LambdaLR runs before `scaler.step`. The
# fix moves it after `scaler.update()`, the end of the step.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(256, 8).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
warmup_steps = 1000
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warmup_steps))
scaler = torch.amp.GradScaler("cuda")
loader = [(torch.randn(32, 256), torch.randint(0, 8, (32,))) for _ in range(200)]

for step, (x, y) in enumerate(loader):
    x, y = x.cuda(), y.cuda()
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    scheduler.step()
    if step % 50 == 0:
        print(step, loss.item())
