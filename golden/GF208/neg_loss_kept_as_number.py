# GF208 negative: lists of per-step losses that keep no graph, or do not
# outlive the iteration.
# - `history` stores `loss.item()` (a Python float);
# - `detached` stores `loss.detach()` under its own name;
# - `window` is a fresh list made inside the loop on every iteration.
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

history = []
detached = []
for step in range(50):
    x, y = torch.randn(32, 5), torch.randn(32, 1)
    opt.zero_grad()
    loss = nn.functional.smooth_l1_loss(model(x), y)
    loss.backward()
    opt.step()
    history.append(loss.item())
    kept = loss.detach()
    detached.append(kept)
    window = []
    window.append(loss)
print(sum(history) / len(history), torch.stack(detached).mean())
