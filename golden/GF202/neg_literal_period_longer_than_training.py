# GF202 negative: schedulers of the epoch family whose literal period is longer
# than the number of epochs this file trains for. StepLR(step_size=30000) over
# 12 epochs would never decay if it were stepped per epoch; the author counts
# optimizer steps, so stepping it every batch is right. Likewise a period
# computed from iterations (len(loader) * epochs, total_steps, max_iters,
# num_training_steps) is per-step on purpose.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import CosineAnnealingLR, MultiStepLR, StepLR

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=12)
parser.add_argument("--lr", type=float, default=0.1)
args = parser.parse_args()

model = nn.Linear(24, 3)
loader = [(torch.randn(16, 24), torch.randint(0, 3, (16,))) for _ in range(40)]
max_iters = 50000
num_training_steps = len(loader) * args.epochs

opt_a = torch.optim.SGD(model.parameters(), lr=args.lr)
step_decay = StepLR(opt_a, step_size=30000, gamma=0.5)
opt_b = torch.optim.AdamW(model.parameters(), lr=1e-3)
cosine = CosineAnnealingLR(opt_b, T_max=100000)
opt_c = torch.optim.SGD(model.parameters(), lr=args.lr)
milestones = MultiStepLR(opt_c, milestones=[20000, 40000])
opt_d = torch.optim.AdamW(model.parameters(), lr=1e-3)
cos_iters = CosineAnnealingLR(opt_d, T_max=max_iters)
opt_e = torch.optim.AdamW(model.parameters(), lr=1e-3)
cos_total = CosineAnnealingLR(opt_e, num_training_steps)


def fit(model, loader, epochs=8):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    sched = StepLR(optimizer, 2000)
    for _ in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
            sched.step()


for epoch in range(args.epochs):
    for x, y in loader:
        opt_a.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt_a.step()
        step_decay.step()
        opt_b.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt_b.step()
        cosine.step()
        opt_c.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt_c.step()
        milestones.step()
        opt_d.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt_d.step()
        cos_iters.step()
        opt_e.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt_e.step()
        cos_total.step()
