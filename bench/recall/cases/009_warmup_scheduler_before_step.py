"""Source: https://github.com/ThilinaRajapakse/pytorch-transformers-classification/issues/21
Title: Detected call of `lr_scheduler.step()` before `optimizer.step()`
What went wrong: the fine-tuning loop stepped its warm-up scheduler above the optimizer step
in every batch, so the first value of the schedule was skipped (fixed by swapping them).
runs: trains but warns "Detected call of lr_scheduler.step() before optimizer.step()"
scope: documented
"""
import torch
import torch.nn as nn

model = nn.Linear(32, 2)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
warmup = 10
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warmup))
loss_fn = nn.CrossEntropyLoss()
batches = [(torch.randn(8, 32), torch.randint(0, 2, (8,))) for _ in range(20)]

for epoch in range(2):
    for inputs, labels in batches:
        loss = loss_fn(model(inputs), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scheduler.step()  # expect: GF203
        optimizer.step()
        model.zero_grad()
