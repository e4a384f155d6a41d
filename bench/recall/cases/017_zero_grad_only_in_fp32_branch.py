"""Source: https://github.com/facebookresearch/nwm/issues/16
Title: Missing opt.zero_grad() when bfloat16 is enabled causes silent gradient accumulation
What went wrong: the train step only zeroes gradients in the branch where bfloat16 is off,
so with bf16 enabled every step accumulates on top of the previous ones.
runs: trains but with bfloat_enable=True gradients accumulate forever
scope: extension (zero_grad present, but only under a condition unrelated to accumulation)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train_step(model, opt, x, y, bfloat_enable):
    if bfloat_enable:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = F.mse_loss(model(x), y)
    else:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
    loss.backward()  # expect: GF205
    opt.step()
    return loss.item()


model = nn.Linear(8, 8)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for _ in range(5):
    train_step(model, opt, torch.randn(4, 8), torch.randn(4, 8), bfloat_enable=True)
