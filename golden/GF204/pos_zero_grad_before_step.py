# GF204 positive: the seed's checklist symptom "grad_norm is always 0". The
# gradients are cleared between backward() and step(): every update is zero.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(16, 4)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
train_dataloader = [(torch.randn(8, 16), torch.randn(8, 4)) for _ in range(100)]
gradient_norms = []

for epoch in range(10):
    total_loss = 0
    for batch_idx, (inputs, targets) in enumerate(train_dataloader):
        logits = model(inputs)
        loss = F.mse_loss(logits, targets)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1)
        gradient_norms.append(grad_norm)
        optimizer.zero_grad()
        optimizer.step()
        total_loss += loss.item()
