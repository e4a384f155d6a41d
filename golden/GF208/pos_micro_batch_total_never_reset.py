"""The same gradient accumulation, but `step_loss` is made once before the training: every optimizer step adds its
micro-batch losses to the same tensor, which links every step's graph (memory grows with the number of steps).
The later `step_loss.detach()` keeps it a tensor, so the fix accumulates `loss.detach()`."""
import torch
import torch.nn as nn

device = torch.device("cpu")
denoiser = nn.Sequential(nn.Linear(16, 64), nn.SiLU(), nn.Linear(64, 16)).to(device)
optimizer = torch.optim.Adam(denoiser.parameters(), lr=2e-4)
micro_batches = 4
stream = iter([torch.randn(8, 16) for _ in range(40)])

step_loss = torch.tensor(0.0, device=device)
for step in range(10):
    optimizer.zero_grad()
    for _ in range(micro_batches):
        clean = next(stream).to(device)
        noise = torch.randn_like(clean)
        loss = (denoiser(clean + noise) - noise).pow(2).mean() / micro_batches
        loss.backward()
        step_loss += loss
    optimizer.step()
    print(step, step_loss.detach().item() / (step + 1))
