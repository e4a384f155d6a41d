# GF202 positive without a fix: with gradient accumulation the StepLR is
# stepped after every optimizer step, still many times per epoch. The call sits
# under the accumulation condition, so gradfix reports it and leaves the move
# to the user.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(64, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
loader = [(torch.randn(4, 64), torch.randint(0, 2, (4,))) for _ in range(64)]
accum_steps = 4

for epoch in range(30):
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
