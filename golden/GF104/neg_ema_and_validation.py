# GF104 negative: `.data` in a no-grad validation loop (no backward) and in a
# mean-teacher EMA update after `optimizer.step()`: reads and writes, but no
# loss term that reaches backward.
import torch
import torch.nn.functional as F


def train_step(model, ema_model, optimizer, x, y, decay=0.999):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    for ema_p, p in zip(ema_model.parameters(), model.parameters()):
        ema_p.data.mul_(decay).add_(p.data, alpha=1 - decay)
    return loss.item()


@torch.no_grad()
def evaluate(model, loader):
    total, correct, val_loss = 0, 0, 0.0
    for x, y in loader:
        out = model(x)
        val_loss += F.cross_entropy(out, y, reduction="sum").data.item()
        correct += (out.data.max(1)[1] == y.data).sum().item()
        total += y.size(0)
    return val_loss / total, correct / total
