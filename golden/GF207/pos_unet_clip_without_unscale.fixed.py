# GF207 positive, as in milesial/Pytorch-UNet before PR #470: the gradients are
# clipped while still multiplied by the loss scale, so almost every update
# shrinks to nothing.
import torch
import torch.nn as nn
import torch.nn.functional as F

amp = True
gradient_clipping = 1.0
model = nn.Conv2d(3, 2, 3, padding=1)
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-5, weight_decay=1e-8, momentum=0.999, foreach=True)
grad_scaler = torch.amp.GradScaler("cuda", enabled=amp)
train_loader = [(torch.randn(2, 3, 32, 32), torch.randint(0, 2, (2, 32, 32))) for _ in range(10)]

for epoch in range(1, 6):
    model.train()
    for images, true_masks in train_loader:
        with torch.autocast("cuda", enabled=amp):
            masks_pred = model(images)
            loss = F.cross_entropy(masks_pred, true_masks)
        optimizer.zero_grad(set_to_none=True)
        grad_scaler.scale(loss).backward()
        grad_scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), gradient_clipping)
        grad_scaler.step(optimizer)
        grad_scaler.update()
