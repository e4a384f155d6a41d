"""Gradient accumulation over micro-batches: `step_loss` is made again as `torch.tensor(0.0)` at the top of every
optimizer step, summed over that step's few micro-batches (each already backpropagated) and read once as a
number. Rebinding it drops the graph it held, so what it keeps is bounded by one step: nothing grows from step
to step."""
import torch
import torch.nn as nn

device = torch.device("cpu")
denoiser = nn.Sequential(nn.Linear(16, 64), nn.SiLU(), nn.Linear(64, 16)).to(device)
optimizer = torch.optim.Adam(denoiser.parameters(), lr=2e-4)
micro_batches = 4
stream = iter([torch.randn(8, 16) for _ in range(40)])

running = 0.0
for step in range(10):
    optimizer.zero_grad()
    step_loss = torch.tensor(0.0, device=device)
    for _ in range(micro_batches):
        clean = next(stream).to(device)
        noise = torch.randn_like(clean)
        loss = (denoiser(clean + noise) - noise).pow(2).mean() / micro_batches
        loss.backward()
        step_loss += loss
    optimizer.step()
    running += step_loss.detach().item()
    print(step, running / (step + 1))
