# GF207 negative: apex's amp.scale_loss clips master params it has already
# unscaled, and accelerate's clip_grad_norm_ unscales by itself.
import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from apex import amp

model = nn.Linear(64, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 64), torch.randint(0, 4, (8,))) for _ in range(100)]
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")

for x, y in loader:
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
    optimizer.step()

accelerator = Accelerator(mixed_precision="fp16")
model, optimizer = accelerator.prepare(model, optimizer)
for x, y in loader:
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    accelerator.backward(loss)
    accelerator.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
