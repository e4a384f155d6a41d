# GF208 negative: lists of per-step losses that keep no graph, or do not
# outlive the iteration.
# - `history` stores `loss.item()` (a Python float);
# - `detached` stores `loss.detach()` under its own name;
# - `window` is a fresh list made inside the loop on every iteration;
# - `per_chunk` is made per batch, around a micro-batch loop whose every pass
#   backpropagates its chunk: it holds one batch's chunk losses at most.
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

for step in range(20):
    x, y = torch.randn(32, 5), torch.randn(32, 1)
    opt.zero_grad()
    per_chunk = []
    for xc, yc in zip(x.chunk(4), y.chunk(4)):
        chunk_loss = nn.functional.mse_loss(model(xc), yc) / 4
        chunk_loss.backward()
        per_chunk.append(chunk_loss)
    opt.step()
    print(sum(c.item() for c in per_chunk))
