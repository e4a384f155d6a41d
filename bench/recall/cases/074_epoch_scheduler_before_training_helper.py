"""Source: https://github.com/SsnL/dataset-distillation/blob/master/main.py
Title: (held-out survey, bench/HELDOUT.md recall) training networks from scratch per epoch
What went wrong: each epoch steps the StepLR schedule first and then calls the file's
`train(...)` helper, whose batch loop steps the optimizer it is given; the first epoch
already runs at the schedule's second value.
runs: trains; PyTorch warns that lr_scheduler.step() ran before optimizer.step()
scope: extension (the optimizer step is in a helper the epoch loop calls)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train(loader, model, epoch, optimizer):
    model.train()
    for data, target in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data), target)
        loss.backward()
        optimizer.step()


def main(epochs=4, decay_epochs=2):
    loader = [(torch.randn(8, 12), torch.randint(0, 3, (8,))) for _ in range(4)]
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.5, 0.999))
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=decay_epochs, gamma=0.5)
    for epoch in range(epochs):
        scheduler.step()  # expect: GF203
        train(loader, model, epoch, optimizer)


if __name__ == "__main__":
    main()
