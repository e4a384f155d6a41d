# GF202 negative: epoch-style schedulers whose period is written in iterations
# (T_max=epochs * len(loader), step_size=total_steps // 3, a variable set to
# 30 * len(loader)) are meant to be stepped per batch; so is ExponentialLR with
# a per-step gamma of 0.9999. A period read from a config (`cfg.milestones`)
# may count either, so gradfix stays silent.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import CosineAnnealingLR, ExponentialLR, StepLR

model = nn.Linear(20, 2)
loader = [(torch.randn(8, 20), torch.randint(0, 2, (8,))) for _ in range(50)]
epochs = 10
total_steps = epochs * len(loader)

opt_a = torch.optim.AdamW(model.parameters(), lr=1e-3)
cosine = CosineAnnealingLR(opt_a, T_max=epochs * len(loader))
opt_b = torch.optim.SGD(model.parameters(), lr=0.1)
steps = StepLR(opt_b, step_size=total_steps // 3, gamma=0.1)
opt_c = torch.optim.SGD(model.parameters(), lr=0.1)
decay = ExponentialLR(opt_c, gamma=0.9999)
decay_every = 30 * len(loader)
opt_d = torch.optim.SGD(model.parameters(), lr=0.1)
by_var = StepLR(opt_d, decay_every)


class cfg:
    milestones = [3000, 6000]


opt_e = torch.optim.SGD(model.parameters(), lr=0.1)
by_cfg = torch.optim.lr_scheduler.MultiStepLR(opt_e, milestones=cfg.milestones)

for epoch in range(epochs):
    for x, y in loader:
        opt_a.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt_a.step()
        cosine.step()
        opt_b.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt_b.step()
        steps.step()
        opt_c.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt_c.step()
        decay.step()
        opt_d.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt_d.step()
        by_var.step()
        opt_e.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt_e.step()
        by_cfg.step()
