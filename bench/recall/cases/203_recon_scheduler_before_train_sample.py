"""Source: https://github.com/zju3dv/NeuralRecon/issues/51
Title: Detected call of `lr_scheduler.step()` before `optimizer.step()`.
What went wrong: the training function steps the MultiStepLR schedule at the top of every
epoch, before its batch loop calls `train_sample`, the helper that runs the optimizer step;
PyTorch warns that the first learning rate is skipped.
runs: trains; warns "Detected call of `lr_scheduler.step()` before `optimizer.step()`"
scope: documented
"""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(9, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999))


def train_sample(sample):
    model.train()
    optimizer.zero_grad()
    loss = nn.functional.l1_loss(model(sample["voxels"]), sample["tsdf"])
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()


def train(epochs=3, start_epoch=0):
    lr_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, [1, 2], gamma=0.5, last_epoch=start_epoch - 1)
    loader = [{"voxels": torch.randn(8, 9), "tsdf": torch.randn(8, 1)} for _ in range(2)]
    for epoch_idx in range(start_epoch, epochs):
        lr_scheduler.step()  # expect: GF203
        for batch_idx, sample in enumerate(loader):
            loss = train_sample(sample)
        print(epoch_idx, loss)


train()
