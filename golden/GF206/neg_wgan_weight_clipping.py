# GF206 negative: WGAN weight clipping after the critic's step clamps the
# weights (not the gradients) and belongs after the step.
import torch
import torch.nn as nn

critic = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
loader = [(torch.randn(8, 32), torch.randn(8, 32)) for _ in range(100)]

for real, fake in loader:
    opt.zero_grad()
    loss = critic(fake).mean() - critic(real).mean()
    loss.backward()
    opt.step()
    for p in critic.parameters():
        p.data.clamp_(-0.01, 0.01)
