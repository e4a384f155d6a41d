# GF208 negative: the criterion returns a dict of loss tensors. After the step, a logging loop
# rebinds every entry to a Python float (`parts[name] = val.item()`) and builds a text line
# with str.format; only then is the total entry added to the epoch sum. Neither `+=` adds a
# tensor: one adds a float, the other concatenates strings.
import torch


def fit_epoch(net, crit, opt, batches):
    epoch_total = 0.0
    for images, targets in batches:
        parts = crit(net(images), targets)
        opt.zero_grad()
        parts["total"].backward()
        opt.step()
        line = "total: {:.4f}, ".format(parts["total"].item())
        for name, val in parts.items():
            parts[name] = val.item()
            if name == "total":
                continue
            line += "{}={:.4f} ".format(name, parts[name])
        epoch_total += parts["total"]
        print(line)
    return epoch_total / max(len(batches), 1)
