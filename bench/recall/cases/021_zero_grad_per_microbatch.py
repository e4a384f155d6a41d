"""Source: https://github.com/bytetriper/RAE/issues/67
Title: train.py: zero_grad is called per microbatch, breaking gradient accumulation
What went wrong: the optimizer's zero_grad sits inside the micro-batch loop, so each
micro-batch wipes the gradients of the previous ones before the single step.
runs: trains but only the last micro-batch reaches optimizer.step()
scope: extension (zero_grad between backwards of an accumulation window)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
grad_accum = 4
batches = [torch.randn(16, 32) for _ in range(5)]

for step, batch in enumerate(batches):
    for micro in batch.chunk(grad_accum):
        optimizer.zero_grad(set_to_none=True)  # expect: GF204
        loss = F.mse_loss(model(micro), micro) / grad_accum
        loss.backward()
    optimizer.step()
