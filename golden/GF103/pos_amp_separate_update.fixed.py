# GF103 positive under AMP: the loss helper clamps the classifier through
# `.data` between forward and backward. The helper keeps its `return`; the
# clamp is re-inserted after the separate `scaler.update()` line, with the
# helper's `layer` mapped to the call-site argument `model.classifier`.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(128, 256), nn.GELU())
        self.classifier = nn.Linear(256, 10)

    def forward(self, x):
        return self.classifier(self.features(x))


def loss_with_constraint(logits, target, layer):
    return F.cross_entropy(logits, target)


device = "cuda" if torch.cuda.is_available() else "cpu"
model = Net().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
scaler = torch.amp.GradScaler(device)

for step in range(1000):
    x = torch.randn(64, 128, device=device)
    y = torch.randint(0, 10, (64,), device=device)
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device, dtype=torch.bfloat16):
        logits = model(x)
        loss = loss_with_constraint(logits, y, model.classifier)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    with torch.no_grad():
        model.classifier.weight.clamp_(-2.0, 2.0)
    if step % 100 == 0:
        print(f"step {step}: {loss.item():.4f}")
