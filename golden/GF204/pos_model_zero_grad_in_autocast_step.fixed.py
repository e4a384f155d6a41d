# GF204 positive in a straight-line train step: `model.zero_grad()` clears the
# gradients that `optimizer` (built on model.parameters()) is about to use. The
# forward pass sits in an autocast block: the fix puts the zero_grad before it.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 8))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def train_step(batch):
    x, y = batch
    model.zero_grad()  # reset for the next batch
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(x)
    loss = F.cross_entropy(logits.float(), y)
    loss.backward()
    optimizer.step()
    return loss.item()
