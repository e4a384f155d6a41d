"""Source: https://github.com/pytorch/tutorials/pull/640
Title: Update transfer_learning_tutorial.py
What went wrong: the transfer-learning tutorial decays the learning rate with
`StepLR(step_size=7, gamma=0.1)`, a period of seven epochs, but calls `scheduler.step()` right
after `optimizer.step()` inside the batch loop, so the rate drops tenfold every seven batches
(the pull request moves it to once per epoch).
runs: trains; the learning rate is 1e-04 after the first epoch, 1e-05 after the second and 1e-06 after the third (the run prints them), instead of dropping once every seven epochs
scope: documented
"""
import torch
import torch.nn as nn

model_ft = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 2))
criterion = nn.CrossEntropyLoss()
optimizer_ft = torch.optim.SGD(model_ft.parameters(), lr=0.001, momentum=0.9)
exp_lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer_ft, step_size=7, gamma=0.1)
loaders = {phase: [(torch.randn(2, 3, 8, 8), torch.randint(0, 2, (2,))) for _ in range(8)]
           for phase in ("train", "val")}
num_epochs = 25
for epoch in range(num_epochs):
    for phase in ("train", "val"):
        model_ft.train() if phase == "train" else model_ft.eval()
        for inputs, labels in loaders[phase]:
            optimizer_ft.zero_grad()
            with torch.set_grad_enabled(phase == "train"):
                loss = criterion(model_ft(inputs), labels)
                if phase == "train":
                    loss.backward()
                    optimizer_ft.step()
                    exp_lr_scheduler.step()  # expect: GF202
    if epoch < 3:
        print(epoch, optimizer_ft.param_groups[0]["lr"])
