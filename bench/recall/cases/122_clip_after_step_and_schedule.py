"""Source: https://github.com/jongwook/onsets-and-frames/issues/24
Title: Gradient clipping in the wrong place?
What went wrong: the training loop calls `clip_grad_norm_` after `loss.backward()`,
`optimizer.step()` and the scheduler step, so the update already used the unclipped
gradients; the author agreed it belongs between backward and step.
runs: trains; the clipping never affects an update
scope: documented
"""
import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_


def train(iterations=6, clip_gradient_norm=3.0):
    model = nn.LSTM(8, 16, batch_first=True)
    head = nn.Linear(16, 88)
    params = list(model.parameters()) + list(head.parameters())
    optimizer = torch.optim.Adam(params, lr=6e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10000, gamma=0.98)
    for i in range(iterations):
        audio, label = torch.randn(2, 20, 8), torch.rand(2, 20, 88)
        out, _ = model(audio)
        loss = nn.functional.binary_cross_entropy_with_logits(head(out), label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        if clip_gradient_norm:
            clip_grad_norm_(params, clip_gradient_norm)  # expect: GF206


if __name__ == "__main__":
    train()
