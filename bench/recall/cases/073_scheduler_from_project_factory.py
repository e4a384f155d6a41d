"""Source: https://github.com/meetps/pytorch-semseg/blob/master/train.py
Title: (held-out survey, bench/HELDOUT.md recall) segmentation training loop
What went wrong: the learning-rate scheduler comes from the project's own factory, so its
class is not visible in the training script, and it is stepped at the top of every
iteration, before that iteration's optimizer step.
runs: needs the project's scheduler module (segkit, not part of this case); with any torch
scheduler from it, PyTorch warns that lr_scheduler.step() ran before optimizer.step(), and the
first value of the schedule is never used
scope: extension (the scheduler's class comes from another module)
"""
import torch
import torch.nn.functional as F

from segkit.schedulers import make_scheduler


def fit(model, loader, cfg):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    scheduler = make_scheduler(optimizer, cfg["lr_schedule"])
    it = 0
    while it < cfg["train_iters"]:
        for images, labels in loader:
            it += 1
            scheduler.step()  # expect: GF203
            model.train()
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
