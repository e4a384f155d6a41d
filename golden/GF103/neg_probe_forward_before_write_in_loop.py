# GF103 negative: inside the training loop a monitoring forward on a held-out
# batch is printed before the weights are clipped through `.data`; its output
# never reaches the loss. The clip comes before the forward whose loss is
# backpropagated, so that forward already sees the clipped weights and backward()
# reads nothing the write changed afterwards.
import torch
import torch.nn as nn

critic = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.RMSprop(critic.parameters(), lr=5e-4)
held_out = torch.randn(6, 4)

for step in range(20):
    if step % 5 == 0:
        print(step, critic(held_out).mean().item())
    for p in critic.parameters():
        p.data.clamp_(-0.05, 0.05)
    batch = torch.randn(12, 4)
    score = critic(batch).mean()
    opt.zero_grad()
    (-score).backward()
    opt.step()
