"""Source: https://github.com/heshuting555/AICITY2020_DMT_VehicleReID/issues/18
Title: Detected call of `lr_scheduler.step()` before `optimizer.step()`
What went wrong: the re-identification trainer steps its multi-step schedule as the first
statement of every epoch, before that epoch's batches step the optimizer; the maintainer's
answer is to move the call to the end of the epoch.
runs: trains; PyTorch warns that lr_scheduler.step() ran before optimizer.step(), and the
first value of the schedule is never used
scope: documented
"""
import torch
import torch.nn as nn


def main(epochs=4):
    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 5))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[2, 3], gamma=0.1)
    criterion = nn.CrossEntropyLoss()
    data = [(torch.randn(8, 12), torch.randint(0, 5, (8,))) for _ in range(3)]
    for epoch in range(1, epochs + 1):
        scheduler.step()  # expect: GF203
        model.train()
        for img, target in data:
            optimizer.zero_grad()
            loss = criterion(model(img), target)
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
