# GF212 negative: submodules run under no_grad in forward that are meant to stay
# frozen and say so (requires_grad_(False) in __init__, or a name like
# `teacher`), and a submodule also run with gradients on in another branch; a
# step whose other calls of the model reach the loss (a loop of unknown length);
# a key tower frozen by the loop that copies the query tower into it.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Distilled(nn.Module):
    def __init__(self, warmup=True):
        super().__init__()
        self.backbone = nn.Linear(8, 16)
        self.backbone.requires_grad_(False)
        self.teacher = nn.Linear(8, 16)
        self.mixer = nn.Linear(8, 16)
        self.head = nn.Linear(16, 2)
        self.warmup = warmup

    def forward(self, x):
        with torch.no_grad():
            a = self.backbone(x)
            t = self.teacher(x)
        if self.warmup:
            with torch.no_grad():
                m = self.mixer(x)
        else:
            m = self.mixer(x)
        return self.head(a + t + m)


model = Distilled()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(3):
    x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()


def loop_with_unknown_count(clf, xs, ys, steps):
    opt = torch.optim.SGD(clf.parameters(), lr=0.1)
    totals = [0.0] * (steps + 1)
    with torch.no_grad():
        totals[0] = F.cross_entropy(clf(xs), ys)
    for k in range(1, steps):
        totals[k] = F.cross_entropy(clf(xs), ys)
    first = F.cross_entropy(clf(xs), ys)
    loss = totals[-1] + first
    opt.zero_grad()
    loss.backward()
    opt.step()


class TwoTowers(nn.Module):
    """A key tower updated by a moving average, frozen through the loop that copies it."""

    def __init__(self):
        super().__init__()
        self.query_tower = nn.Linear(8, 4)
        self.key_tower = nn.Linear(8, 4)
        for q, k in zip(self.query_tower.parameters(), self.key_tower.parameters()):
            k.data.copy_(q.data)
            k.requires_grad = False

    def forward(self, x):
        with torch.no_grad():
            keys = self.key_tower(x)
        return (self.query_tower(x) * keys).sum(1)


towers = TwoTowers()
tower_opt = torch.optim.SGD(towers.parameters(), lr=0.1)
for _ in range(3):
    tower_opt.zero_grad()
    towers(torch.randn(4, 8)).mean().backward()
    tower_opt.step()
