"""Source: https://github.com/huggingface/accelerate/issues/1299
Title: when use gradient_accumulation, optimizer.zero_grad() must be put to the end of a training iteration
What went wrong: with gradient accumulation the loop clears gradients at the top of every
iteration, throwing away the micro-batches accumulated since the last optimizer step.
runs: trains but each step only sees the last micro-batch's gradient
scope: extension (zero_grad before the forward, but between the accumulated backwards and the step)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(20, 3)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
accumulation_steps = 4
dataloader = [(torch.randn(8, 20), torch.randint(0, 3, (8,))) for _ in range(16)]

for step, (inputs, targets) in enumerate(dataloader):
    optimizer.zero_grad()  # expect: GF204
    loss = F.cross_entropy(model(inputs), targets) / accumulation_steps
    loss.backward()
    if (step + 1) % accumulation_steps == 0:
        optimizer.step()
