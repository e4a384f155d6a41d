# GF203 negative: the lr and weight-decay schedules come from the project's own factory
# (`build_optim` in another module, returning plain objects whose `step()` writes the value
# for the coming update). A step closure nested in `run` calls them before the optimizer
# step: that is their contract, and PyTorch's warning is about its own schedulers only.
import torch

from .optim_setup import build_optim


def run(cfg, encoder, predictor, loader):
    optimizer, lr_sched, wd_sched = build_optim(encoder, predictor, cfg)
    for epoch in range(cfg.epochs):
        for images, masks in loader:
            def one_step():
                lr_sched.step()
                wd_sched.step()
                z = encoder(images)
                loss = predictor(z, masks).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                return float(loss)

            one_step()
