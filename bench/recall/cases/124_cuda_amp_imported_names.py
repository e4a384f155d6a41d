"""Source: https://github.com/igorshmukler/kokoro-ruslan/pull/34
Title: Fix deprecated torch.cuda.amp
What went wrong: the TTS trainer imports `autocast` and `GradScaler` from `torch.cuda.amp`
and uses both; current PyTorch reports both as deprecated, and the pull request moves them to
`torch.amp` with the device type.
runs: torch emits FutureWarnings for the scaler and for autocast
scope: documented
"""
import torch
import torch.nn as nn
from torch.cuda.amp import GradScaler, autocast


def train_step(model, optimizer, scaler, batch):
    optimizer.zero_grad()
    with autocast(enabled=torch.cuda.is_available()):  # expect: GF301
        loss = nn.functional.mse_loss(model(batch), batch)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()


if __name__ == "__main__":
    model = nn.Linear(8, 8)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = GradScaler(enabled=torch.cuda.is_available())  # expect: GF301
    print(train_step(model, optimizer, scaler, torch.randn(4, 8)))
