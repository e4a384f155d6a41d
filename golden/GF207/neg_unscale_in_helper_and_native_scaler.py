# GF207 negative: the unscale happens in a helper of this file; and timm's
# NativeScaler does backward, unscale_, clip and step inside its __call__.
import torch
import torch.nn as nn
import torch.nn.functional as F
from timm.utils import NativeScaler

model = nn.Linear(64, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
loader = [(torch.randn(8, 64), torch.randint(0, 4, (8,))) for _ in range(100)]


def unscale_all(s, opt):
    s.unscale_(opt)


for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    unscale_all(scaler, optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()

loss_scaler = NativeScaler()
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = F.cross_entropy(model(x), y)
    loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())
