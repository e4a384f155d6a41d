# GF202 positive: the second seed's loop with its scheduler made explicit. StepLR
# counts its period in step() calls, so stepping it per batch decays the
# learning rate once per batch instead of once per epoch.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(16, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
train_dataloader = [(torch.randn(8, 16), torch.randn(8, 4)) for _ in range(100)]
epochs = 90

for epoch in range(epochs):
    model.train()
    total_loss = 0

    for batch_idx, (inputs, targets) in enumerate(train_dataloader):
        optimizer.zero_grad()
        logits = model(inputs)
        loss = F.mse_loss(logits, targets)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1)
        optimizer.step()
        # decay the learning rate
        scheduler.step()
        total_loss += loss.item()

    avg_loss = total_loss / len(train_dataloader)
    print(f"epoch {epoch}: loss {avg_loss:.4f}, lr {scheduler.get_last_lr()[0]:g}")
