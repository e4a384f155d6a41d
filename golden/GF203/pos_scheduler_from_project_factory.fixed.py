# GF203 positive: the scheduler comes from the project's own factory, so its class is
# not known here, but it is named like one and built from the optimizer. It is stepped
# at the top of the batch loop, before that iteration's optimizer step.
import torch

from .schedules import make_schedule


def run(model, loader, loss_fn, cfg):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    scheduler = make_schedule(optimizer, cfg["schedule"])
    for images, labels in loader:
        model.train()
        optimizer.zero_grad()
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        scheduler.step()
