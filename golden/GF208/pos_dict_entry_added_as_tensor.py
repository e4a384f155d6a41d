# GF208 positive: the dict entries are only read for logging (`v.item()` into another dict);
# the entry summed into the epoch total is still the loss tensor.
import torch


def fit_epoch(net, crit, opt, batches):
    epoch_total = 0.0
    for images, targets in batches:
        parts = crit(net(images), targets)
        opt.zero_grad()
        parts["total"].backward()
        opt.step()
        shown = {}
        for name, val in parts.items():
            shown[name] = val.item()
        epoch_total += parts["total"]
    return epoch_total
