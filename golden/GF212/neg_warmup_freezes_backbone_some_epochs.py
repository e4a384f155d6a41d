# GF212 negative: the backbone is frozen only during warm-up epochs; afterwards it
# is called with gradients on, so the optimizer does train it.
import torch
import torch.nn as nn
import torch.nn.functional as F

backbone = nn.Sequential(nn.Linear(64, 64), nn.ReLU())
head = nn.Linear(64, 10)
opt = torch.optim.SGD([*backbone.parameters(), *head.parameters()], lr=0.01)


def train(loader, epochs=10, warmup=2):
    for epoch in range(epochs):
        for x, y in loader:
            if epoch < warmup:
                with torch.no_grad():
                    f = backbone(x)
            else:
                f = backbone(x)
            loss = F.cross_entropy(head(f), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
