# GF212 negative: the teacher runs under no_grad and is not in the optimizer, and
# the validation loop under no_grad has no backward().
import torch
import torch.nn as nn
import torch.nn.functional as F

teacher = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 5))
student = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 5))
opt = torch.optim.Adam(student.parameters(), lr=1e-3)


def distill(loader, val_loader):
    for x, _ in loader:
        with torch.no_grad():
            soft = F.softmax(teacher(x), dim=-1)
        loss = F.kl_div(F.log_softmax(student(x), dim=-1), soft, reduction="batchmean")
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        acc = sum((student(x).argmax(-1) == y).float().mean().item() for x, y in val_loader)
    return acc / len(val_loader)
