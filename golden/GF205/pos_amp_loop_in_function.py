# GF205 positive in a function with AMP: the scaled gradients pile up across
# iterations because no zero_grad() runs.
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, epochs=1):
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(epochs):
        for x, y in loader:
            with torch.autocast("cuda"):
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
