# GF204 positive without a fix: gradient accumulation over 4 batches, but the
# clear sits outside the accumulation condition. It runs after every batch's
# backward, so the step only ever sees the last batch's gradient (a quarter
# of it, since the loss is divided by 4). Clear inside the condition instead.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(20, 40), nn.ReLU(), nn.Linear(40, 5))
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
loader = [(torch.randn(8, 20), torch.randint(0, 5, (8,))) for _ in range(32)]
accum_steps = 4

for epoch in range(6):
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
        optimizer.zero_grad()


def train_epoch(net, opt, batches, every=8):
    for step, (x, y) in enumerate(batches):
        opt.zero_grad(set_to_none=True)
        out = net(x)
        (F.cross_entropy(out, y) / every).backward()
        if step % every == 0 or step == len(batches) - 1:
            opt.step()
