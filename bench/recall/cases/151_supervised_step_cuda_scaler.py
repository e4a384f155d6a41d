"""Source: https://github.com/pytorch/ignite/issues/3435
Title: Fix FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)` instead.
What went wrong: the helper that builds an AMP training step creates
`torch.cuda.amp.GradScaler(enabled=True)` when asked for a scaler, which emits the deprecation
FutureWarning; the issue asks to use `torch.amp.GradScaler('cuda', ...)`.
runs: emits FutureWarning (`torch.cuda.amp.GradScaler(args...)` is deprecated); without CUDA the scaler disables itself with a warning
scope: documented
"""
import torch
import torch.nn as nn


def supervised_training_step_amp(model, optimizer, loss_fn, scaler=False):
    if scaler is True:
        scaler = torch.cuda.amp.GradScaler(enabled=True)  # expect: GF301

    def update(batch):
        model.train()
        optimizer.zero_grad()
        x, y = batch
        loss = loss_fn(model(x), y)
        if scaler:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        return loss.item()

    return update


if __name__ == "__main__":
    model = nn.Linear(6, 2)
    step = supervised_training_step_amp(model, torch.optim.SGD(model.parameters(), 0.1), nn.MSELoss(), scaler=True)
    step((torch.randn(4, 6), torch.randn(4, 2)))
