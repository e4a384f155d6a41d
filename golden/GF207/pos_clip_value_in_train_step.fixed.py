# GF207 positive with clip_grad_value_ in a train-step function: the value
# bound 1.0 is applied to gradients scaled by 65536.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(128, 10)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler()


def train_step(x, y):
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    return loss.detach()
