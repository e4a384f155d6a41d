# GF202 negative: warm-up schedules stepped per batch: a LambdaLR warm-up,
# transformers' get_linear_schedule_with_warmup and get_scheduler (all
# per-iteration by design).
import torch
import torch.nn as nn
from transformers import get_linear_schedule_with_warmup, get_scheduler

model = nn.Linear(768, 2)
loader = [(torch.randn(8, 768), torch.randint(0, 2, (8,))) for _ in range(100)]
epochs = 3
warmup = 500
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
warmup_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup))
hf_scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=warmup,
                                               num_training_steps=epochs * len(loader))
lr_scheduler = get_scheduler("cosine", optimizer=optimizer, num_warmup_steps=warmup,
                             num_training_steps=epochs * len(loader))
criterion = nn.CrossEntropyLoss()

for epoch in range(epochs):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        warmup_scheduler.step()
        hf_scheduler.step()
        lr_scheduler.step()
