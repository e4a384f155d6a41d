"""Source: https://github.com/thuml/Time-Series-Library/issues/740
Title: `torch.cuda.amp` is deprecated.
What went wrong: the experiment loop uses both `torch.cuda.amp.autocast()` and
`torch.cuda.amp.GradScaler()`, the deprecated spellings of torch.amp.
runs: trains but warns for both calls
scope: documented
"""
import torch
import torch.nn as nn

use_amp = torch.cuda.is_available()
model = nn.Linear(96, 24)
model_optim = torch.optim.Adam(model.parameters(), lr=1e-4)
criterion = nn.MSELoss()
if use_amp:
    scaler = torch.cuda.amp.GradScaler()  # expect: GF301

for epoch in range(2):
    for _ in range(3):
        batch_x, batch_y = torch.randn(8, 7, 96), torch.randn(8, 7, 24)
        model_optim.zero_grad()
        if use_amp:
            with torch.cuda.amp.autocast():  # expect: GF301
                outputs = model(batch_x)
                loss = criterion(outputs, batch_y)
            scaler.scale(loss).backward()
            scaler.step(model_optim)
            scaler.update()
        else:
            loss = criterion(model(batch_x), batch_y)
            loss.backward()
            model_optim.step()
