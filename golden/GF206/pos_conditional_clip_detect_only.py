# GF206 positive without a fix: the late clip sits under `if args.clip`, in a
# different block from the step; gradfix reports it and leaves the move.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

args = argparse.Namespace(clip=0.5)
model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]

for x, y in loader:
    optimizer.zero_grad()
    F.mse_loss(model(x), y).backward()
    optimizer.step()
    if args.clip:
        nn.utils.clip_grad_norm_(model.parameters(), args.clip)
