"""Source: https://github.com/milesial/Pytorch-UNet/issues/468
Title: Gradients are clipped before the unscaling
What went wrong: with a GradScaler the training loop clips the still-scaled gradients,
so the clip threshold is compared against values multiplied by the loss scale.
runs: trains but clipping acts on gradients x65536 (needs CUDA for AMP to be active)
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 2, 1)).to(device)
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-5, weight_decay=1e-8, momentum=0.999)
grad_scaler = torch.amp.GradScaler("cuda", enabled=device.type == "cuda")
gradient_clipping = 1.0
loader = [(torch.randn(2, 3, 32, 32), torch.randint(0, 2, (2, 32, 32))) for _ in range(3)]

for epoch in range(2):
    model.train()
    for images, true_masks in loader:
        images, true_masks = images.to(device), true_masks.to(device)
        with torch.autocast(device.type, enabled=device.type == "cuda"):
            masks_pred = model(images)
            loss = F.cross_entropy(masks_pred, true_masks)
        optimizer.zero_grad(set_to_none=True)
        grad_scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), gradient_clipping)  # expect: GF207
        grad_scaler.step(optimizer)
        grad_scaler.update()
