# GF208 positive: the epoch statistics are a dict of number totals made before the batch
# loop, and each batch adds its loss terms to the entries without `.item()`: every entry
# turns into a tensor chaining the graphs of all the epoch's batches. Two forms: the
# values of a dict of loss terms built in the loop, and the entries of the dict the
# model's loss method returns (its "total" entry is the one backpropagated).
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(10, 24)
        self.reg = nn.Linear(24, 2)
        self.cls = nn.Linear(24, 3)

    def forward(self, x):
        h = torch.tanh(self.trunk(x))
        return self.reg(h), self.cls(h)

    def losses(self, outputs, coords, labels):
        reg, cls = outputs
        parts = {"reg": F.smooth_l1_loss(reg, coords), "cls": F.cross_entropy(cls, labels)}
        parts["total"] = parts["reg"] + parts["cls"]
        return parts


def run_epoch_terms(net, batches, opt):
    stats = {"reg": 0.0, "cls": 0.0}
    for x, coords, labels in batches:
        reg, cls = net(x)
        terms = {"reg": F.smooth_l1_loss(reg, coords), "cls": F.cross_entropy(cls, labels)}
        objective = terms["reg"] + 0.5 * terms["cls"]
        opt.zero_grad()
        objective.backward()
        opt.step()
        for part, term in terms.items():
            stats[part] += term
    return stats


def run_epoch_method(net, batches, opt):
    sums = defaultdict(float)
    for x, coords, labels in batches:
        parts = net.losses(net(x), coords, labels)
        opt.zero_grad()
        parts["total"].backward()
        opt.step()
        for part in parts:
            sums[part] += parts[part]
    return dict(sums)
