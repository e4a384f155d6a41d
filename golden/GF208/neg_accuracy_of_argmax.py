# GF208 negative: the running accuracy adds a number computed from the predicted
# classes (`argmax`), which carry no graph; the loss itself is summed as `.item()`.
import torch
import torch.nn as nn


def percent_correct(labels, guesses):
    return (labels == guesses).float().mean().item() * 100


model = nn.Linear(4, 3)
criterion = nn.CrossEntropyLoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(4)]

for epoch in range(3):
    seen_loss, seen_acc = 0.0, 0.0
    for xb, yb in loader:
        scores = model(xb)
        loss = criterion(scores, yb)
        seen_loss += loss.item()
        seen_acc += percent_correct(labels=yb, guesses=scores.argmax(dim=1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(epoch, seen_loss / len(loader), seen_acc / len(loader))
