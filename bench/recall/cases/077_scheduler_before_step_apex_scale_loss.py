"""Source: https://github.com/ksw0306/FloWaveNet/blob/master/train_apex.py
Title: (held-out survey, bench/HELDOUT4B.md recall) vocoder training with apex mixed precision
What went wrong: the StepLR schedule (period in iterations) is stepped at the top of
every batch, before that batch's optimizer step; the backward pass runs inside apex's
`with amp.scale_loss(loss, optimizer) as scaled_loss:` block, written here as a small
context manager of the file with the same contract (it yields the scaled loss).
runs: trains; PyTorch warns that lr_scheduler.step() ran before optimizer.step()
scope: extension (the backward is inside a `with scale_loss(...) as scaled_loss:` block)
"""
import contextlib

import torch
import torch.nn as nn


@contextlib.contextmanager
def scale_loss(loss, optimizer, loss_scale=128.0):
    yield loss * loss_scale
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is not None:
                p.grad.div_(loss_scale)


def train(model, loader, optimizer, scheduler):
    model.train()
    for x, c in loader:
        scheduler.step()  # expect: GF203
        optimizer.zero_grad()
        loss = -model(torch.cat([x, c], dim=1)).mean()
        with scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=200000, gamma=0.5)
    batches = [(torch.randn(4, 3), torch.randn(4, 3)) for _ in range(3)]
    train(net, batches, opt, sched)
