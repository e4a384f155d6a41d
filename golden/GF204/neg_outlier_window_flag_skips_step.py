# GF204 negative: a window whose mean loss jumps far above its running average is thrown away: its gradients
# are cleared and `drop = True`; the update runs only under `if not drop:`, so a clear and a step never happen
# in the same window (and `if drop: ... else:` reads the same way).
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Linear(6, 1)
opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
batches = [(torch.randn(4, 6), torch.randn(4, 1)) for _ in range(24)]
window, running, total = 3, 0.0, 0.0

for n, (x, y) in enumerate(batches):
    loss = F.mse_loss(net(x), y)
    (loss / window).backward()
    total += loss.item()
    if (n + 1) % window == 0:
        mean = total / window
        total = 0.0
        drop = False
        if running > 0 and mean > 5.0 * running:
            drop = True
            print(f"dropping window ending at batch {n}: {mean:.3f}")
            opt.zero_grad(set_to_none=True)
        if not drop and mean > 0:
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
        running = mean if running == 0 else 0.9 * running + 0.1 * mean

for n, (x, y) in enumerate(batches):
    loss = F.mse_loss(net(x), y)
    loss.backward()
    bad = False
    if not torch.isfinite(loss):
        opt.zero_grad()
        bad = True
    if bad:
        print("skipped")
    else:
        opt.step()
        opt.zero_grad()
