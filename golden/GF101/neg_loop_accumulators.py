# GF101 negative: a training loop whose augmented assignments all act on
# Python numbers (`running_loss += loss.item()`, counters), not on tensors.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
train_loader = [(torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))) for _ in range(20)]

for epoch in range(5):
    running_loss, correct, seen = 0.0, 0, 0
    for step, (images, labels) in enumerate(train_loader):
        optimizer.zero_grad()
        logits = model(images)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
        correct += (logits.argmax(dim=1) == labels).sum().item()
        seen += labels.size(0)
    print(f"epoch {epoch}: loss {running_loss / len(train_loader):.4f} acc {correct / seen:.3f}")
