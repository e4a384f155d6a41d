"""Source: https://github.com/jdonnelly36/Deformable-ProtoPNet/issues/6
Title: UserWarning: Detected call of lr_scheduler.step() before optimizer.step()
What went wrong: the first epochs train only some layers with a warm-up optimizer; from the
first joint epoch on, the joint optimizer's scheduler is stepped at the top of the epoch,
before the training helper has stepped the joint optimizer even once (the warning appears
"when the code runs to the fifth epoch"). The maintainer fixed the order.
runs: trains; PyTorch warns at the first joint epoch, and the joint schedule's first value
is skipped
scope: extension (the step sits in the `else` of a test on the epoch, before a helper call)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


def main(num_train_epochs=8, num_warm_epochs=5):
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
    warm_optimizer = torch.optim.Adam(model[2].parameters(), lr=1e-3)
    joint_optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    joint_lr_scheduler = torch.optim.lr_scheduler.StepLR(joint_optimizer, step_size=2, gamma=0.1)
    loader = [(torch.randn(4, 10), torch.randint(0, 3, (4,))) for _ in range(3)]
    for epoch in range(num_train_epochs):
        if epoch < num_warm_epochs:
            train(model, loader, warm_optimizer)
        else:
            joint_lr_scheduler.step()  # expect: GF203
            train(model, loader, joint_optimizer)


if __name__ == "__main__":
    main()
