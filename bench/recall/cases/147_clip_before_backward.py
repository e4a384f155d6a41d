"""Source: https://github.com/yandex-research/tabm/issues/20
Title: Incorrect gradient clipping?
What went wrong: the example training step clips the gradients before `backward()` has
produced them, so the clip acts on the previous step's (already applied and then zeroed)
gradients and does nothing to the current update.
runs: trains; the clipping never touches the gradients the optimizer uses
scope: extension (clip before backward() rather than after the step)
"""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)
grad_clip = 1.0


def train_step(x, y):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x).squeeze(-1), y)
    if grad_clip is not None:
        nn.utils.clip_grad_norm_(model.parameters(), grad_clip)  # expect: GF206
    loss.backward()
    optimizer.step()
    return loss.item()


for epoch in range(3):
    for _ in range(4):
        train_step(torch.randn(16, 12), torch.randn(16))
