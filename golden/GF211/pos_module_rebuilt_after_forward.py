# GF211 positive: the model is built once; `probe` is rebuilt every pass, but the model that
# trains is not. Evaluating the model every `check_every` steps from inside the batch loop,
# with no `model.train()` after it, leaves the rest of the batches training in eval mode.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
data = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(12)]
check_every = 4

model.train()
for step, (x, y) in enumerate(data):
    probe = nn.Linear(2, 1)
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    if step % check_every == 0:
        model.eval()
        with torch.no_grad():
            print(probe(model(x)).mean().item())
