"""Source: https://github.com/coarse-graining/cgnet/issues/105
Title: pytorch>1.1 error when training
What went wrong: the example training loop calls `scheduler.step()` as the first statement of each
epoch, before the batch loop steps the optimizer; since PyTorch 1.1 this skips the first value of
the schedule and PyTorch warns "Detected call of `lr_scheduler.step()` before `optimizer.step()`".
runs: trains; PyTorch warns "Detected call of `lr_scheduler.step()` before `optimizer.step()`" and the first epoch already runs at the decayed rate
scope: documented
"""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(9, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(net.parameters(), lr=3e-3)
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[1, 2], gamma=0.5)
trainloader = [(torch.randn(8, 9), torch.randn(8, 9)) for _ in range(5)]
num_epochs = 3
for epoch in range(1, num_epochs + 1):
    scheduler.step()  # expect: GF203
    train_loss = 0.0
    for num, (coord, force) in enumerate(trainloader):
        optimizer.zero_grad()
        coord.requires_grad_(True)
        energy = net(coord).sum()
        pred_force = -torch.autograd.grad(energy, coord, create_graph=True)[0]
        loss = (pred_force - force).pow(2).mean()
        loss.backward()
        optimizer.step()
        train_loss += loss.item()
    print(epoch, optimizer.param_groups[0]["lr"], train_loss)
